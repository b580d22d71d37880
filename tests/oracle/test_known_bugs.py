"""The catalogue of torch's known bugs (spec chapter 08, DIF-11): the corpus's wrong results
are named, and a bug is known only for the releases it was observed on."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from checker.io.model_file import Model, load_model_file
from checker.oracle.compare.canon import CanonNode
from checker.oracle.compare.divergence import (
    NO_EVIDENCE,
    Blame,
    Divergence,
    Evidence,
    Kind,
    Raised,
    RunFault,
)
from checker.oracle.compare.faults import Unequal
from checker.oracle.compare.graph_level import sort_case
from checker.oracle.compare.known_bugs import CATALOGUE, classified, identify, known_for
from checker.oracle.diff.driver import run_diff
from checker.oracle.sides.sides import Component, make_sides
from reference.torch_version import TORCH
from tests.support.corpus import CORPUS_DIR
from tests.support.models import njt_blocks, njt_inputs


def _divergence(
    component: Component, kind: Kind, detail: str, evidence: Evidence, case: str = ""
) -> Divergence:
    return Divergence(component, kind, Blame.OTHER, detail, "torch", case, evidence=evidence)


@pytest.mark.spec("DIF-11")
@pytest.mark.parametrize(
    ("stem", "component", "bug"),
    [
        ("b1_float_constants", Component.TRACKER, "B1"),
        ("b2_targets", Component.TRACKER, "B2"),
        ("b4_overlap", Component.TRACKER, "B4"),
        ("b3_shared_input", Component.DEDUP, "B3"),
        ("own_inplace_inside", Component.DEDUP, "B13"),
        ("own_autograd_function", Component.DEDUP, "N3"),
        ("own_batchnorm_train", Component.DEDUP, "N14"),
        ("own_foreach_updates", Component.DEDUP, "N15"),
        ("own_saved_operand", Component.DEDUP, "N16"),
    ],
)
def test_dif11_corpus_bugs_are_named(stem: str, component: Component, bug: str) -> None:
    report = run_diff([load_model_file(CORPUS_DIR / f"{stem}.py")], "torch", str(component))
    (found,) = report.graphs[0].divergences
    assert (found.wrong, found.bug, found.known) == ("torch", bug, True), found.detail


@pytest.mark.spec("DIF-11")
def test_dif11_known_only_where_observed_and_inherited_by_dedup() -> None:
    raised = Raised("RuntimeError", "mixing the legacy and new APIs is not supported")
    crash = _divergence(Component.TRACKER, Kind.CRASH, f"torch's tracker raised {raised}",
                        Evidence(raised=raised))  # fmt: skip
    bug = identify(crash)
    assert bug is not None and bug.id == "N6"
    assert known_for("N6", "2.13.0") and not known_for("N6", "2.15.0")
    call = "call_function"
    pair = Unequal("x", CanonNode(call, "f", "1.0"), "y", CanonNode(call, "f", "2.0"), 0)
    tracker = _divergence(Component.TRACKER, Kind.REGIONS, str(pair), Evidence(fault=pair))
    numbers = Evidence(run=RunFault.VALUES)
    dedup = _divergence(Component.DEDUP, Kind.GRAPH, "node 3: numbers differ", numbers)
    assert [d.bug for d in classified((tracker, dedup))] == ["B1", "B1"]
    assert classified((dedup,))[0].bug == ""  # alone, a wrong graph is not named
    assert len({b.id for b in CATALOGUE}) == len(CATALOGUE)


@pytest.mark.spec("DIF-11")
def test_dif11_bugs_are_matched_on_fields_never_on_the_detail_s_words() -> None:
    """A detail that holds a bug's words, with no evidence behind them, is no bug."""
    words = "KeyError: 'example_value'; the reference refused RPL-8; (SRT-12)"
    assert identify(_divergence(Component.DEDUP, Kind.CRASH, words, NO_EVIDENCE)) is None


@pytest.mark.spec("DIF-11")
def test_dif11_a_functorch_graph_crashing_torchs_tracker_is_n7_on_every_release() -> None:
    def twice(a: torch.Tensor) -> torch.Tensor:
        return (a * 2).sin() * 2

    def vmapped(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(torch.vmap(twice)(x))

    model = Model("vmapped", vmapped, (torch.randn(3, 4),), False, "")
    report = run_diff([model], "torch", str(Component.TRACKER))
    (found,) = report.graphs[0].divergences
    assert (found.kind, found.wrong, found.bug, found.known) == (Kind.CRASH, "torch", "N7", True)
    assert all(known_for("N7", v) for v in ("2.13.0", "2.14.1", "2.15.0"))


@pytest.mark.spec("DIF-11")
@pytest.mark.parametrize(
    ("ran", "evidence"),
    [
        ("raised IndexError: index out of range in self",
         Evidence(raised=Raised("IndexError", "index out of range in self"))),
        ("raised RuntimeError: index 94317158753392 is out of bounds for dimension 1 with size 64",
         Evidence(raised=Raised("RuntimeError", "index 94317158753392 is out of bounds"))),
        ("numbers differ: Tensor-likes are not close!",  # dropout drawn on the extra run
         Evidence(run=RunFault.VALUES)),
    ],
)  # fmt: skip
def test_dif11_the_same_graph_running_differently_is_n4(ran: str, evidence: Evidence) -> None:
    detail = f"the same graph runs differently; torch: example inputs: {ran}"
    same = replace(evidence, same_meaning=True)
    bug = identify(_divergence(Component.DEDUP, Kind.GRAPH, detail, same))
    assert bug is not None and bug.id == "N4"


@pytest.mark.spec("DIF-11")
@pytest.mark.parametrize("same_meaning", [True, False])
def test_dif11_an_index_error_in_torch_s_run_is_n4_whatever_the_groups(same_meaning: bool) -> None:
    """N4 with other groups than the reference's (MaxViT): the graphs differ, torch's raises an
    index error when run. The same graph failing otherwise, or a crash in the pass, is not N4."""
    raised = Raised("IndexError", "index out of range in self")
    ran = Evidence(raised=raised, same_meaning=same_meaning)
    bug = identify(_divergence(Component.DEDUP, Kind.GRAPH, "torch: raised", ran))
    assert bug is not None and bug.id == "N4"
    other = Evidence(raised=Raised("TypeError", "'NoneType' object is not subscriptable"))
    assert identify(_divergence(Component.DEDUP, Kind.GRAPH, "torch: raised", other)) is None
    in_the_pass = replace(ran, same_meaning=False)
    assert identify(_divergence(Component.DEDUP, Kind.CRASH, "torch: raised", in_the_pass)) is None


@pytest.mark.spec("DIF-11")
def test_dif11_nested_jagged_blocks_name_n8_in_dedup_and_b9_in_every_split_case() -> None:
    model = Model("njt", njt_blocks, njt_inputs(), False, "")
    found = run_diff([model], "torch", "all").graphs[0].divergences
    assert {(d.component, d.bug) for d in found} == {
        (Component.DEDUP, "N8"),
        (Component.SPLIT, "B9"),
    }, [d.detail for d in found]
    assert all(d.wrong == "torch" for d in found)


@pytest.mark.spec("DIF-11")
def test_dif11_torch_s_bare_sort_assertion_is_n10_by_the_function_that_raised_it() -> None:
    """torch 2.11 and 2.12 assert the sort's result without a message; the evidence names the
    function that raised, and N10 is recognised from it as from 2.13's message."""

    def _stable_topological_sort() -> None:
        raise AssertionError  # what 2.11's bare `assert` raises (pytest rewrites one here)

    with pytest.raises(AssertionError) as failed:
        _stable_topological_sort()
    raised = Raised.of(failed.value)
    assert raised == Raised("AssertionError", "(no message) in _stable_topological_sort")
    for evidence in (
        Evidence(raised=raised),
        Evidence(raised=Raised("AssertionError", "(no message)")),
    ):
        crash = _divergence(Component.DEDUP, Kind.CRASH, "the pass crashed", evidence)
        found = identify(crash)
        assert (found.id if found else None) == ("N10" if evidence.raised == raised else None)
    message = Raised("AssertionError", "stable topological sort failed")
    bug = identify(_divergence(Component.DEDUP, Kind.CRASH, "", Evidence(raised=message)))
    assert bug is not None and bug.id == "N10"


class _OutputNamed(torch.nn.Module):
    """A submodule named `output`: symbolic tracing gives a `call_module` node targeting it."""

    def __init__(self) -> None:
        super().__init__()
        self.output = torch.nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.output(x))


@pytest.mark.spec("SRT-3", "DIF-11")
def test_dif11_a_module_named_output_crashes_the_sort_of_torch_2_11_and_2_12() -> None:
    """N13: torch 2.11 and 2.12's sort take the `output` submodule's call for the output node;
    the reference sorts it, and from 2.13 torch agrees."""
    gm = torch.fx.symbolic_trace(_OutputNamed())
    found = classified(sort_case(gm, make_sides("torch", "sort"), "reversed"))
    if TORCH.version.startswith(("2.11.", "2.12.")):
        (crash,) = found
        assert (crash.kind, crash.wrong, crash.bug, crash.known) == (
            Kind.CRASH,
            "torch",
            "N13",
            True,
        )
    else:
        assert not found


@pytest.mark.spec("DIF-11")
def test_dif11_the_dead_int_is_n5_before_n4() -> None:
    """`own_dynamic_shape_blocks.py`: torch's pass returns a dead `getitem(size, 2)` from the
    subgraph, and its runtime reads the int's `requires_grad` when the graph runs. Both graphs
    mean the same, so N4's "runs differently" also matches; the catalogue checks N5 first, so
    the divergence is the plain-int output it is. On 2.14.1 and later both sides agree."""
    model = load_model_file(CORPUS_DIR / "own_dynamic_shape_blocks.py")
    found = run_diff([model], "torch", "dedup").graphs[0].divergences
    if not known_for("N5"):
        assert not found
        return
    (divergence,) = found
    assert (divergence.wrong, divergence.bug, divergence.known) == ("torch", "N5", True)
    assert "'int' object has no attribute 'requires_grad'" in divergence.detail
    n4 = next(b for b in CATALOGUE if b.id == "N4")
    assert n4.matches(divergence)  # what made it N4 while N4 came first
