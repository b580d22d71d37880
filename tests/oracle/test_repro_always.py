"""Every blamed divergence has a standalone repro, dynamic shapes included, or the report says
why none could be written; a repro's header names the interpreter that runs it (spec chapter
08, DIF-28)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from checker.io.model_file import load_model_file
from checker.oracle.compare.divergence import Blame, Divergence, Kind
from checker.oracle.diff.driver import run_diff
from checker.oracle.diff.report import DiffReport, GraphDiff, render_text
from checker.oracle.repro.write import not_captured
from checker.oracle.sides.sides import Component
from tests.support.corpus import CORPUS_DIR
from tests.support.repros import fails_from_elsewhere

LAZY = "checker.oracle.plugins.planted:LazyPlaceholders"


@pytest.mark.spec("DIF-28")
def test_dif28_lazy_placeholders_on_a_dynamic_model_come_with_a_repro(tmp_path: Path) -> None:
    """A split that makes the root's placeholders in order of first use under
    `keep_original_order` swaps a size symbol and a tensor of `own_dynamic.py`: blamed on the
    plug-in, with a repro that names this interpreter and fails standalone elsewhere."""
    model = load_model_file(CORPUS_DIR / "own_dynamic.py")
    report = run_diff([model], LAZY, "split", repro_dir=tmp_path / "repros")
    (graph,) = report.graphs
    blamed = [d for d in graph.divergences if d.blame is Blame.OTHER]
    assert blamed and all("keep_original_order=True" in d.case for d in blamed)
    assert all(d.component is Component.SPLIT for d in graph.divergences)
    (repro,) = graph.repros
    assert graph.no_repros == ()
    text = Path(repro).read_text()
    assert f"# run it with: {sys.executable} <this file>\n" in text
    assert "LazyPlaceholders" in fails_from_elsewhere(repro, tmp_path / "elsewhere")


@pytest.mark.spec("DIF-28")
def test_dif28_a_blame_without_a_repro_says_why() -> None:
    """A model that could not be captured has no graph to shrink: each blamed kind says so in
    the report instead of an empty `repros`."""
    crash = Divergence(Component.DEDUP, Kind.CRASH, Blame.OTHER, "mine raised", "mine")
    free = Divergence(Component.DEDUP, Kind.GRAPH, Blame.NEITHER, "both correct; x", "mine")
    made = not_captured([crash, crash, free])
    assert made.written == ()
    assert made.missing == (
        "dedup crash, wrong=mine: the model was not captured, so there is no graph to shrink",
    )
    diff = GraphDiff("m.py", (crash,), no_repros=made.missing)
    text = render_text(DiffReport("mine", (Component.DEDUP,), (), (diff,)))
    assert "    no repro: dedup crash, wrong=mine: the model was not captured" in text
    assert diff.to_json()["no_repros"] == list(made.missing)
