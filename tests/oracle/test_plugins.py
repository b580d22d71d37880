"""The plug-in contract (spec chapter 08, DIF-1, DIF-12): the example plug-in, written from
`checker/oracle/protocol.py` alone, agrees; its planted-bug twin is caught and blamed, with a
repro per component; a plug-in's exceptions and contract violations are its own."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from checker.io.model_file import Model, load_model_file
from checker.oracle.diff import run_diff
from checker.oracle.divergence import Blame, Component, Kind
from checker.oracle.repro_run import fails_with_assertion
from tests.support.corpus import CORPUS_DIR

EXAMPLE = "checker.oracle.plugins.example:Example"
PLANTED = "checker.oracle.plugins.example:Planted"
SOME = ["t01_single_region_group", "d03_multiple_subgraphs", "d15_mutation_ordering",
        "own_residual_mlp", "own_grad_modes", "own_dynamic"]  # fmt: skip


def _corpus(*stems: str) -> list[Model]:
    return [load_model_file(CORPUS_DIR / f"{s}.py") for s in stems]


@pytest.mark.spec("DIF-1")
def test_dif1_the_example_plug_in_agrees() -> None:
    """No side blamed: where the example's valid sort order differs from torch's order, it is
    a free choice ("neither"), listed but not failed; `split` is not implemented: skipped."""
    report = run_diff(_corpus(*SOME), EXAMPLE, "all")
    assert not report.fails, [d.detail for g in report.graphs for d in g.divergences]
    assert report.skipped == (Component.SPLIT,)
    found = [d for g in report.graphs for d in g.divergences]
    assert all(d.blame is Blame.NEITHER and d.component is Component.SORT for d in found)


@pytest.mark.spec("DIF-1", "DIF-8")
def test_dif1_each_planted_bug_is_blamed_with_a_repro_per_component(tmp_path: Path) -> None:
    """B1-like keying (tracker), mutation-order deps dropped (dedup: the subgraph mutates an
    input, CHK-15), extra deps ignored (sort): each blamed on the plug-in, one repro each."""
    stems = ("b1_float_constants", "d15_mutation_ordering")
    report = run_diff(_corpus(*stems), PLANTED, "all", repro_dir=tmp_path)
    floats, mutation = report.graphs
    blamed = {(d.component, d.blame) for g in report.graphs for d in g.divergences}
    assert {
        (c, Blame.OTHER) for c in (Component.TRACKER, Component.DEDUP, Component.SORT)
    } <= blamed
    tracker = next(d for d in floats.divergences if d.component is Component.TRACKER)
    assert "is not" in tracker.detail and "0.5" in tracker.detail
    dedup = next(d for d in mutation.divergences if d.component is Component.DEDUP)
    assert "CHK-15" in dedup.detail or "numbers differ" in dedup.detail, dedup.detail
    sort = next(d for d in mutation.divergences if d.component is Component.SORT)
    assert "comes before its dependency" in sort.detail
    written = [Path(r) for g in report.graphs for r in g.repros]
    names = {p.name.split("_repro")[0].rsplit("_", 1)[-1] for p in written}
    assert {"tracker", "dedup", "sort"} <= names, written
    assert all(fails_with_assertion(p) for p in written)
    text = next(p for p in written if "sort" in p.name).read_text()
    assert "comes before its dependency" in text.splitlines()[1]  # the shrunk case's header


PLUGINS = """
class Raises:
    def find_regions(self, graph):
        raise ValueError("my plug-in's own bug")


class BreaksTheContract:
    def find_regions(self, graph):
        return [[["x0", 3]]]

    def stable_sort(self, graph, deps):
        import torch

        first = next(iter(graph.nodes))
        with graph.inserting_after(first):
            graph.call_function(torch.sin, (first,))  # a sort that adds a node
"""


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A user's module of plug-ins, importable as `my_plugins`."""
    (tmp_path / "my_plugins.py").write_text(PLUGINS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_plugins"
    sys.modules.pop("my_plugins", None)


@pytest.mark.spec("DIF-12")
def test_dif12_a_plug_in_s_exception_is_its_own(plugins: str) -> None:
    report = run_diff(_corpus("t01_single_region_group"), f"{plugins}:Raises", "tracker")
    (found,) = report.graphs[0].divergences
    assert (found.kind, found.blame) == (Kind.CRASH, Blame.OTHER)
    assert found.detail == "my_plugins:Raises raised ValueError: my plug-in's own bug"
    assert "raise ValueError" in found.traceback and "find_regions" in found.traceback
    divergences = cast(list[dict[str, str]], report.to_json()["divergences"])
    assert divergences[0]["traceback"] == found.traceback


@pytest.mark.spec("DIF-12")
def test_dif12_contract_violations_name_the_field(plugins: str) -> None:
    report = run_diff(_corpus("d15_mutation_ordering"), f"{plugins}:BreaksTheContract", "all")
    found = report.graphs[0].divergences
    assert all(d.kind is Kind.CONTRACT and d.blame is Blame.OTHER for d in found)
    details = {d.detail for d in found}
    assert "find_regions returned groups[0][0][1] = 3, not a node name" in details
    assert "stable_sort added nodes sin" in details
    assert not [d for d in found if d.kind is Kind.ORACLE_ERROR]


@pytest.mark.spec("DIF-6")
def test_dif6_random_models_catch_dropped_mutation_order_deps() -> None:
    """`random_0_5` updates a block's second input in place (a graph input), so the order of
    that update and the next block's reads matters across regions: the planted plug-in, whose
    ordering deps leave out mutations, computes a wrong result there."""
    report = run_diff([], PLANTED, "dedup", random=6, seed=0)
    blamed = [g.graph for g in report.graphs for d in g.divergences if d.blame is Blame.OTHER]
    assert blamed == ["random_0_5"]
    assert "numbers differ" in report.graphs[5].divergences[0].detail
