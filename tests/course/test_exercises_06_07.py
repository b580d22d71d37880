"""Solutions of the exercises at the end of spec chapters 06-07, the checker and its shape
prover (issue 8: a course that cannot rot; the reading path is `specs/course.md`).

One test per exercise, `test_<chapter>_exercise_<n>`, in chapter order; each docstring states
the answer and names the invariants the exercise is about. Chapters 04-05 are in
`tests/course/test_exercises_04_05.py`.
"""

from __future__ import annotations

import pytest
import sympy
import torch
from torch.utils._sympy.functions import FloorDiv, PythonMod

from checker.proof.check import check_transformation
from checker.proof.report import ACYCLIC, DATAFLOW, NUMBERS, ORDERING, RUNTIME
from checker.proof.shapes.prove import (
    ShapeFacts,
    SymbolRange,
    prove_equal,
    prove_sizes_equal,
    z3_value_at,
)
from checker.proof.verdict import Holds, Unknown, Violated
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.outline.outliner import DedupResult
from reference.pipeline import deduplicate
from reference.split import split_module
from tests.course.test_exercises_04_05 import GM, by_name, child
from tests.support.corpus import CORPUS_DIR, load_model_file

pytestmark = pytest.mark.filterwarnings("ignore")


# ---- 06 checker ------------------------------------------------------------------------------


def _block(t: torch.Tensor) -> torch.Tensor:
    return torch.relu(t * 1.5) + t


def _blocks(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _block(x) * _block(y)


@pytest.fixture(scope="module")
def dedup() -> tuple[GM, GM, DedupResult]:
    """Chapter 06's worked example: (original copy, deduplicated module, result)."""
    c = capture(_blocks, (torch.randn(4), torch.randn(4)))
    original = copy_graph_module(c.gm).gm
    return original, c.gm, deduplicate(c.gm, c.tracker)


def with_constant(transformed: GM, value: float) -> GM:
    """A copy of `transformed` whose subgraph multiplies by `value` instead of 1.5."""
    planted = copy_graph_module(transformed).gm
    body = child(planted, "subgraph_0")
    mul = by_name(body)["mul"]
    mul.args = (mul.args[0], value)
    body.recompile()
    return planted


@pytest.mark.spec("CHK-3", "CHK-13")
def test_06_exercise_1(dedup: tuple[GM, GM, DedupResult]) -> None:
    """CHK-3 compares constants exactly and sees the change; CHK-13's float32 tolerance (rtol
    1.3e-6) absorbs a relative error of 1e-9, so CHK-6 holds."""
    original, transformed, _ = dedup
    report = check_transformation(original, with_constant(transformed, 1.5000000015))
    assert {o.id for o in report.violations} == {"CHK-3"}
    assert isinstance(report.verdict_of(NUMBERS), Holds)
    verdict = report.verdict_of(DATAFLOW)
    assert isinstance(verdict, Violated) and verdict.witness.endswith("1.5000000015 instead of 1.5")


@pytest.mark.spec("CHK-6", "CHK-7")
def test_06_exercise_2(dedup: tuple[GM, GM, DedupResult]) -> None:
    """CHK-6: tensors on the meta device have no values, so the numbers are Unknown (and so is
    CHK-17, which runs the module too). CHK-7: nothing is violated, yet the report is not ok:
    unknown is never a pass."""
    original, transformed, _ = dedup
    meta = (torch.empty(4, device="meta"), torch.empty(4, device="meta"))
    report = check_transformation(original, transformed, meta)
    assert report.violations == ()
    assert [o.id for o in report.unknowns] == [NUMBERS, RUNTIME] and not report.ok
    verdict = report.verdict_of(NUMBERS)
    assert isinstance(verdict, Unknown) and verdict.reason.startswith("CHK-6: ")


@pytest.mark.spec("CHK-2")
def test_06_exercise_3(dedup: tuple[GM, GM, DedupResult]) -> None:
    """CHK-2: the dep closes `invoke_subgraph -> getitem -> mul_2 -> invoke_subgraph`; the
    witness names that cycle, earliest node first."""
    original, transformed, _ = dedup
    n = by_name(transformed)
    report = check_transformation(
        original, transformed, extra_deps={n["invoke_subgraph"]: [n["mul_2"]]}
    )
    assert {o.id for o in report.violations} == {"CHK-2"}
    verdict = report.verdict_of(ACYCLIC)
    assert isinstance(verdict, Violated)
    assert "invoke_subgraph -> getitem -> mul_2 -> invoke_subgraph" in verdict.witness


@pytest.mark.spec("CHK-4", "SPL-9")
def test_06_exercise_4() -> None:
    """CHK-4 holds: every partition re-enters the autocast state it needs (SPL-9), so each
    computing node runs in its original state although the switches run in another order; an
    edge check would have paired the original enter with an early copy and reported a false
    violation (findings C2, C3)."""
    info = load_model_file(CORPUS_DIR / "own_autocast_back_to_back.py")
    original = capture(info.model, info.example_inputs, info.dynamic).gm
    calls = [n for n in original.graph.nodes if n.op not in ("placeholder", "output")]
    position = {n: i for i, n in enumerate(calls)}
    split = split_module(original, None, position.__getitem__, keep_original_order=False)
    bodies = [
        [n.name for n in child(split, str(m.target)).graph.nodes if n.op.startswith("call")]
        for m in split.graph.nodes
        if m.op == "call_module"
    ]
    assert bodies[0] == ["t"], "the code after both blocks runs first"
    switching = next(b for b in bodies if "_enter_autocast" in b)
    assert switching == ["_enter_autocast", "_exit_autocast"], "a switch-only partition"
    report = check_transformation(original, split)
    assert isinstance(report.verdict_of(ORDERING), Holds) and report.ok, report.render_text()


# ---- 07 shapes -------------------------------------------------------------------------------

s0 = sympy.Symbol("s0", integer=True)


@pytest.mark.spec("SHP-2", "SHP-9")
def test_07_exercise_1() -> None:
    """SHP-2: nested floor divisions by positive numbers compose. SHP-9: `(s0 // 2) * 3` and
    `(s0 * 3) // 2` differ at every odd `s0`; z3's smallest-looking answer is `s0 = 1`, where
    they are 0 and 1."""
    assert prove_equal(FloorDiv(FloorDiv(s0, 2), 3), FloorDiv(s0, 6)) == Holds()
    verdict = prove_equal(FloorDiv(s0, 2) * 3, FloorDiv(s0 * 3, 2))
    assert isinstance(verdict, Violated)
    ((name, value),) = verdict.model
    assert name == "s0" and value % 2 == 1
    assert (value // 2) * 3 != (value * 3) // 2


@pytest.mark.spec("SHP-2", "SHP-3", "SHP-5")
def test_07_exercise_2() -> None:
    """SHP-2, SHP-3: Python's `7 // -2 == -4` and `1 % -2 == -1` (SMT's Euclidean `div` and
    `mod` give -3 and 1); the encoding agrees with Python. SHP-5: at `b = 0` it is undefined."""
    a, b = sympy.symbols("a b", integer=True)
    assert z3_value_at(FloorDiv(a, b), {"a": 7, "b": -2}) == 7 // -2 == -4
    assert z3_value_at(PythonMod(a, b), {"a": 1, "b": -2}) == 1 % -2 == -1
    undefined = z3_value_at(FloorDiv(a, b), {"a": 7, "b": 0})
    assert isinstance(undefined, Unknown) and undefined.reason.startswith("SHP-5:")


@pytest.mark.spec("SHP-10", "SHP-12")
def test_07_exercise_3() -> None:
    """SHP-10: from contradictory facts everything follows, so the answer is Unknown, not
    Holds. SHP-12: sizes of different lengths are Violated without a query."""
    impossible = ShapeFacts(ranges=(SymbolRange("s0", 5, 3),))
    verdict = prove_equal(s0, s0 + 1, impossible)
    assert isinstance(verdict, Unknown) and verdict.reason.startswith("SHP-10:")
    assert prove_sizes_equal([s0, 2], [s0]) == Violated("SHP-12: 2 dimensions vs 1")
