"""The differential oracle on the corpus (spec chapter 08, DIF): torch's wrong results are
blamed on torch with a repro that fails on torch's side, torch-right models agree, and a
planted bug in a user's implementation is caught and blamed on it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest
import torch
import torch.fx

from checker.io.model_file import Model, load_model_file, model_from_source
from checker.oracle.compare.run import capture_for, diff_capture
from checker.oracle.diff.driver import run_diff
from checker.oracle.diff.report import DiffReport, render_text
from checker.oracle.protocol import CapturedGraph
from checker.oracle.repro.prover import fails_with_assertion
from checker.oracle.sides.impls import ReferenceImpl, ReferenceOutput
from checker.oracle.sides.sides import Component, make_sides
from reference.dynamo.capture import Capture
from reference.policy import RIGHT, Policy
from reference.torch_version import TORCH
from tests.support.corpus import CORPUS_DIR

pytestmark = [pytest.mark.torch_diff, pytest.mark.filterwarnings("ignore")]

TORCH_RIGHT = [
    "d01_single_subgraph",
    "d02_single_subgraph2",
    "d16_tuple_return",
    "d17_tuple_inputs",
    "b3_shared_input_reversed",
    "own_dynamic",
    "own_tuple_chunk",
    "own_views_reshape",
    "own_residual_mlp",
    "t01_single_region_group",
]


def _kinds(report: DiffReport) -> list[tuple[str, str, str]]:
    return [(str(d.component), str(d.kind), d.wrong) for g in report.graphs for d in g.divergences]


def corpus(*stems: str) -> list[Model]:
    return [load_model_file(CORPUS_DIR / f"{stem}.py") for stem in stems]


@pytest.mark.spec("DIF-4", "DIF-8")
@pytest.mark.parametrize(
    ("stem", "kind"),
    [
        ("b1_float_constants", "graph"),
        ("b2_targets", "graph"),
        ("b3_shared_input", "graph"),
        ("own_autocast_back_to_back", "order"),
    ],
)
def test_dif8_torch_wrong_results_blame_torch_with_a_repro_that_fails_on_torch(
    stem: str, kind: str, tmp_path: Path
) -> None:
    """B1, B2, B3, and SRT-10 with autocast (a call sorted out of its autocast block): a dedup
    divergence, wrong = torch, and a repro of a few dozen lines that imports only torch and
    fails with AssertionError when run as a script."""
    report = run_diff(corpus(stem), "torch", "dedup", repro_dir=tmp_path)
    assert _kinds(report) == [("dedup", kind, "torch")]
    assert "numbers differ" in report.graphs[0].divergences[0].detail
    (repro,) = report.graphs[0].repros
    text = Path(repro).read_text()
    assert len(text.splitlines()) <= 54  # a few dozen, with the release check's 6 (FIL-14)
    imports = [ln.split()[1] for ln in text.splitlines() if ln.startswith(("import ", "from "))]
    assert set(imports) <= {"torch", "__future__", "sys"}  # sys: the release check (FIL-14)
    ran = subprocess.run([sys.executable, repro], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "AssertionError" in ran.stderr, ran.stderr[-2000:]


@pytest.mark.spec("DIF-2", "DIF-3")
def test_dif3_agreement_where_torch_is_right() -> None:
    """Every component agrees on corpus models where torch is right (no grad-mode or
    autocast switch: torch's split_module mishandles those, see below)."""
    report = run_diff(corpus(*TORCH_RIGHT), "torch", "all")
    assert not [d for g in report.graphs for d in g.divergences], render_text(report)


@pytest.mark.spec("DIF-4", "DIF-22")
def test_dif4_b13_b4_and_grad_mode_switches_blame_torch() -> None:
    """B13 (wrong result), B4 (overlapping groups), SRT-8 (dedup moves a call across a
    grad-mode switch), B6 (split leaks grad mode), partition_affix KeyError (SPL-2)."""
    files = ["own_inplace_inside", "b4_overlap", "own_grad_modes"]
    report = run_diff(corpus(*files), "torch", "all")
    inplace, overlap, grad = report.graphs
    assert ("dedup", "graph", "torch") in _kinds(DiffReport("torch", (), (), (inplace,)))
    assert ("tracker", "regions", "torch") in _kinds(DiffReport("torch", (), (), (overlap,)))
    assert "g2 is in group 0 region 0 and in group 1 region 1" in overlap.divergences[0].detail
    by_case = {(str(d.component), d.case): d for d in grad.divergences}
    moved = by_case["dedup", ""]
    # torch 2.13's runtime marks the moved calls' outputs non-differentiable from the body's
    # metadata, so only CHK-4 sees SRT-8; 2.11 and 2.12's does not, and from 2.14 the body runs
    # eagerly: a run shows it
    evidence = "CHK-4" if TORCH.hop_marks_from_body else "requires_grad"
    assert moved.wrong == "torch" and evidence in moved.detail, moved.detail
    leak = by_case["split", "each, keep_original_order=False"]
    assert leak.wrong == "torch" and "requires_grad" in leak.detail
    affix = by_case["split", "thirds, keep_original_order=False, partition_affix='p'"]
    assert (affix.kind, affix.wrong) == ("refusal", "torch") and "KeyError" in affix.detail


@pytest.mark.spec("DIF-4", "DIF-5")
def test_dif5_split_module_ignores_mutation_order() -> None:
    """Dedup, regions and sort agree on models with in-place ops, but torch's split_module
    (default order) runs a partition that reads a tensor before the one that mutates it."""
    files = ["d05_input_mutation", "d15_mutation_ordering"]
    report = run_diff(corpus(*files), "torch", "all")
    for graph in report.graphs:
        assert graph.divergences, graph.graph
        for d in graph.divergences:
            assert (d.component, d.wrong) == (Component.SPLIT, "torch"), d
            assert "keep_original_order=False" in d.case and "numbers differ" in d.detail


@pytest.mark.spec("DIF-10")
def test_dif10_json_schema_and_determinism() -> None:
    paths = corpus("b3_shared_input", "d02_single_subgraph2")
    one = run_diff(paths[:1], "torch", "dedup").to_json()
    head = {"$fxoracle", "against", "torch", "device", "components", "skipped", "fails"}
    assert set(one) == head | {"graph", "agree", "divergences", "repros", "no_repros"}
    assert one["agree"] is False and one["repros"] == [] and one["fails"] is True
    for d in cast(list[dict[str, object]], one["divergences"]):
        assert set(d) == {"component", "kind", "wrong", "detail", "bug", "known_for_this_torch"}
        assert d["bug"] == "B3" and d["known_for_this_torch"] is True  # DIF-11
        assert d["wrong"] in ("torch", "reference", "both", "neither", "unknown")
    two = run_diff(paths, "torch", "dedup").to_json()
    assert set(two) == head | {"agree", "graphs", "summary"}
    assert two["summary"] == {"graphs": 2, "agree": 1, "by_wrong": {"torch": 1},
                              "by_component": {"dedup": 1}}  # fmt: skip
    assert json.dumps(two, sort_keys=True) == json.dumps(
        run_diff(paths, "torch", "dedup").to_json(), sort_keys=True
    )


PLANTED = '''
from checker.oracle.sides.impls import ReferenceImpl


class DropsADep(ReferenceImpl):
    """A planted bug: the sort ignores every extra dependency."""

    def stable_sort(self, graph, deps):
        super().stable_sort(graph, {})


class OnlySplit:
    """A planted bug: the split module scales its first output by 1.001."""

    def split(self, gm, callback, keep_original_order, partition_affix):
        import operator

        from reference.split import split_module

        split = split_module(gm, None, callback, keep_original_order=keep_original_order)
        out = next(n for n in split.graph.nodes if n.op == "output")
        with split.graph.inserting_before(out):
            bumped = split.graph.call_function(operator.mul, (out.args[0][0], 1.001))
        out.args = ((bumped, *out.args[0][1:]),)
        split.recompile()
        return split
'''


@pytest.mark.spec("DIF-1", "DIF-7")
def test_dif1_planted_bugs_in_a_users_implementation_are_blamed_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quality test: a user's `module:attr` with planted bugs; only the parts it implements
    are compared, the divergences name it, and the shrunk repro still fails."""
    (tmp_path / "planted_impls.py").write_text(PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    report = run_diff(corpus("d15_mutation_ordering"), "planted_impls:DropsADep", "sort",
                      repro_dir=tmp_path / "r")  # fmt: skip
    assert {d.wrong for d in report.graphs[0].divergences} == {"planted_impls:DropsADep"}
    assert "comes before its dependency" in report.graphs[0].divergences[0].detail
    (repro,) = report.graphs[0].repros
    assert fails_with_assertion(Path(repro))
    split = run_diff(corpus("own_residual_mlp"), "planted_impls:OnlySplit", "all")
    found = split.graphs[0].divergences
    assert found and {(d.component, d.wrong) for d in found} == {
        (Component.SPLIT, "planted_impls:OnlySplit")
    }
    sys.modules.pop("planted_impls", None)


BOTH_RIGHT = {
    "aliased_operands": (
        "def block(h, g):\n    return torch.sin(h * 1.5) * g\n\n\n"
        "def model(x):\n    with torch.no_grad():\n        h0 = block(x, x)\n"
        "    h1 = block(x, x)\n    return h0, h1, block(h0, h1)\n\n\n"
        "example_inputs = (torch.randn(4, 8),)\n",
        "the reference refused group 0 region 0: RPL-8: inputs or outputs of the region share "
        "storage (input l_x_ is passed as two operands)",
    ),
    "grad_pin": (
        "def block(h, g):\n    return torch.tanh(h).sigmoid() * g\n\n\n"
        "def model(x0, x1):\n    with torch.no_grad():\n        h0 = block(x1, x1)\n"
        "    h1 = block(h0, h0)\n    with torch.no_grad():\n        h2 = block(x0, x0)\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        h3 = block(h0, h0)\n"
        "    return h0, h1, h2, h3\n\n\n"
        "example_inputs = (torch.randn(4, 8, requires_grad=True), torch.randn(4, 8))\n",
        "with torch's unpinned grad mode (without SRT-8) the reference gives the same graph",
    ),
    "lossy_erasure": (
        "def block(h, g):\n    t = (h + g).transpose(0, 1).contiguous().transpose(0, 1)\n"
        "    t = (t * 2).relu() + 2\n    return t, t.sum()\n\n\n"
        "def model(x0, x1):\n    h0 = block(x0, x1)\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        h1 = block(h0[0], h0[0])\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        h2 = block(h0[0], h0[0])\n"
        "    return h0, h1, h2\n\n\n"
        "example_inputs = (torch.randn(6, 8), torch.randn(6, 8))\n",
        "with torch's erasure that drops an erased node's own deps (without SRT-10) the reference "
        "gives the same graph",
    ),
}


@pytest.mark.spec("DIF-4", "DIF-24", "DIF-25")
@pytest.mark.parametrize("name", sorted(BOTH_RIGHT))
def test_dif4_both_right_divergence_says_why_the_reference_differs(
    name: str, tmp_path: Path
) -> None:
    """DIF-4 (fuzz models random_12_23, random_13_365, random_14_123, shrunk): torch is right
    by luck (B3 keeps the representative's one operand; SRT-10 moves a call into the other of
    two equal autocast blocks) or by its own rule (no grad pin); the reference refuses aliased
    operands (RPL-8) or keeps its rules (SRT-8, SRT-10): neither side is wrong, with the reason,
    and rerun with torch's rules the reference gives torch's very graph. Where only the order
    differs, and no effect or global state depends on it, the graphs mean the same: they agree
    unless `--strict-order` compares positions (DIF-3)."""
    source, reason = BOTH_RIGHT[name]
    model = model_from_source(name, "import torch\n\n\n" + source)
    report = run_diff([model], "torch", "dedup", strict_order=name != "aliased_operands")
    (found,) = report.graphs[0].divergences
    detail = found.detail.replace("input l_args_0_ ", "input l_x_ ")  # 2.11, 2.12's Dynamo name
    assert found.wrong == "neither" and detail.endswith(reason), found.detail
    assert "; both correct; both compute the original; " in found.detail  # DIF-25
    assert not report.fails and report.agree  # DIF-24
    if name != "aliased_operands":  # only the order differs, and it is free (DIF-3)
        assert not run_diff([model], "torch", "dedup").graphs[0].divergences


@pytest.mark.spec("DIF-4", "RPL-25")
def test_dif4_crossed_regions_blame_torch_s_crash() -> None:
    """Chapter 02's crossed calls: torch's pass fails its sort (N10); the reference refuses the
    group (RPL-25), is judged right, and torch's crash is torch's."""
    report = run_diff(corpus("a7_crossed_calls"), "torch", "dedup")
    (found,) = report.graphs[0].divergences
    assert (str(found.kind), found.wrong, found.bug) == ("crash", "torch", "N10"), found
    said = ("stable topological sort failed", "erase", "(no message) in _stable_topological_sort")
    assert any(words in found.detail for words in said), found.detail  # the last: 2.11, 2.12


@pytest.mark.spec("DIF-11")
@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a9_getitem_in_next_region", "crash"),
        ("a10_getitem_in_later_group", "crash"),
        ("own_mha_blocks", "crash"),
    ],
)
def test_dif11_a_getitem_of_a_replaced_tuple_is_n11(name: str, kind: str) -> None:
    """DiT's and SD3's blocks, shrunk, and a chain of `MultiheadAttention` blocks: a region
    holds a getitem of a tuple an earlier call replaced (in the next region of the group, A9 and
    the chain; in a later group, A10). The reference passes the call's getitem instead (RPL-17)
    and is right; torch's sort fails, or its graph (the reference's, but with `scale = None[0]`
    in the body) raises when run: torch is blamed, N11, neither N10 nor N4."""
    report = run_diff(corpus(name), "torch", "dedup")
    (found,) = report.graphs[0].divergences
    assert (str(found.kind), found.wrong, found.bug) == (kind, "torch", "N11"), found
    assert found.evidence.taken_over and not found.evidence.refusals


class _Disguised(ReferenceImpl):
    """The reference's pass, but every subgraph module runs other code than its graph says:
    the same meaning, other numbers (only a run shows it)."""

    def deduplicate(self, graph: CapturedGraph, policy: Policy = RIGHT) -> ReferenceOutput:
        out = super().deduplicate(graph, policy)
        for name, sub in out.transformed.named_children():
            if name.startswith("subgraph") and isinstance(sub, torch.fx.GraphModule):
                forward = sub.forward
                sub.__dict__["forward"] = lambda *a, f=forward: tuple(t * 2 for t in f(*a))
        return out


@pytest.mark.spec("DIF-4", "DIF-3")
@pytest.mark.parametrize("disguised", ["reference", "other"])
def test_dif4_sides_that_agree_in_meaning_are_still_run(disguised: str) -> None:
    """Equal meanings are not an agreement until each side has run against the original on the
    example inputs: whichever side's module does other than its graph is blamed, the
    reference's included."""
    sides = make_sides("reference", "dedup")
    if disguised == "reference":
        sides = replace(sides, reference=_Disguised())
    else:
        sides = replace(sides, other=_Disguised(), label="disguised")
    graph = capture_for(corpus("t01_single_region_group")[0], sides)
    assert isinstance(graph, Capture)
    (found,) = diff_capture(graph, sides)
    wanted = "reference" if disguised == "reference" else "other"
    assert str(found.blame) == wanted and "runs differently" in found.detail, found
