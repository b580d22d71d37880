"""Solutions of the exercises at the end of spec chapters 04-07 (issue 8: a course that
cannot rot; the reading path is `specs/course.md`).

One test per exercise, `test_<chapter>_exercise_<n>`, in chapter order; each docstring states
the answer and names the invariants the exercise is about. The graphs are small and built by
hand where possible: the whole file runs in a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
import sympy
import torch
import torch.fx
from torch.utils._sympy.functions import FloorDiv, PythonMod

from checker.check import check_transformation
from checker.graph_copy import copy_graph_module
from checker.report import ACYCLIC, DATAFLOW, NUMBERS
from checker.shapes import ShapeFacts, SymbolRange, prove_equal, prove_sizes_equal, z3_value_at
from checker.verdict import Holds, Unknown, Violated
from reference.capture import capture
from reference.dedup import DedupResult, deduplicate
from reference.deps import OrderingDeps
from reference.errors import FxOracleError
from reference.order import stable_topological_sort
from reference.split import split_module
from reference.split_plan import plan_split
from tests.models import call

pytestmark = pytest.mark.filterwarnings("ignore")

Node = torch.fx.Node
GM = torch.fx.GraphModule


def by_name(gm: GM) -> dict[str, Node]:
    return {n.name: n for n in gm.graph.nodes}


def child(gm: GM, name: str) -> GM:
    found = gm.get_submodule(name)
    assert isinstance(found, GM)
    return found


def order(gm: GM) -> list[str]:
    return [n.name for n in gm.graph.nodes]


# ---- 01 the key ------------------------------------------------------------------------------


def named(deps: OrderingDeps) -> list[tuple[str, list[str]]]:
    return [(k.name, [d.name for d in v]) for k, v in deps.as_mapping().items()]


@pytest.mark.spec("SRT-6")
def test_04_exercise_1() -> None:
    """SRT-6: `add_` first: `a` precedes it, `cos`, `mul_` and `exp` follow it. Then `mul_`:
    `a`, `add_` (already listed) and `cos` precede it, `exp` follows it."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = call(g, "a", "sin", x)
    add_ = call(g, "add_", "add_", x, 1)
    b = call(g, "b", "cos", x)
    mul_ = call(g, "mul_", "mul_", x, 2)
    c = call(g, "c", "exp", x)
    g.output((a, b, c))
    deps = OrderingDeps.from_graph(g, {add_: [0], mul_: [0]})
    assert named(deps) == [
        ("add_", ["a"]),
        ("b", ["add_"]),
        ("mul_", ["add_", "a", "b"]),
        ("c", ["add_", "mul_"]),
    ]
    assert deps.deps_of(a) == () and deps.deps_of(mul_)[0] is add_


def worked_example() -> tuple[GM, dict[str, Node]]:
    """Chapter 04's worked example, in its original order: before, add_, after, out."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    before = call(g, "before", torch.sin, x)
    call(g, "add_", "add_", x, 1)
    after = call(g, "after", torch.cos, x)
    g.output(call(g, "out", torch.add, before, after))
    gm = GM(torch.nn.Module(), g)
    return gm, by_name(gm)


def _outline_after(inherit: bool) -> tuple[GM, OrderingDeps, Node]:
    """`after` replaced by `inv`, a fresh call put right after `x`, then erased."""
    gm, n = worked_example()
    deps = OrderingDeps.from_graph(gm.graph, {n["add_"]: [0]})
    with gm.graph.inserting_after(n["x"]):
        inv = call(gm.graph, "inv", torch.cos, n["x"])
    n["after"].replace_all_uses_with(inv)
    gm.graph.erase_node(n["after"])
    deps.redirect(n["after"], inv, inherit=inherit)
    stable_topological_sort(gm.graph, deps.as_mapping())
    gm.recompile()
    return gm, deps, inv


@pytest.mark.spec("SRT-9", "SRT-10")
def test_04_exercise_2() -> None:
    """SRT-9: torch's update drops `after`'s own entry, so `inv` has no deps and stays first,
    reading `x` before the write. SRT-10: with `inherit=True`, `inv` follows `add_`."""
    reference, _ = worked_example()
    expected = reference(torch.tensor([0.5, 1.0]))
    dropped, deps, inv = _outline_after(inherit=False)
    assert deps.deps_of(inv) == ()
    assert order(dropped) == ["x", "inv", "before", "add_", "out", "output"]
    with pytest.raises(AssertionError):
        torch.testing.assert_close(dropped(torch.tensor([0.5, 1.0])), expected)
    kept, deps, inv = _outline_after(inherit=True)
    assert [d.name for d in deps.deps_of(inv)] == ["add_"]
    assert order(kept) == ["x", "before", "add_", "inv", "out", "output"]
    torch.testing.assert_close(kept(torch.tensor([0.5, 1.0])), expected)


@pytest.mark.spec("SRT-5")
def test_04_exercise_3() -> None:
    """SRT-5: `out` needs `before` (data) and `before` now needs `out`: the error names the
    cycle from its earliest node, and the graph keeps its order."""
    gm, n = worked_example()
    extra = {n["before"]: [n["out"]]}
    with pytest.raises(FxOracleError) as error:
        stable_topological_sort(gm.graph, extra)
    assert str(error.value) == "SRT-5: no topological order exists: cycle before -> out -> before"
    assert order(gm) == ["x", "before", "add_", "after", "out", "output"]


# ---- 05 split --------------------------------------------------------------------------------


def b6_graph(with_grad_nodes: bool = True) -> GM:
    """Chapter 05's worked example: a = sin(x); with no_grad: e = cos(a); return e + a, a."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = call(g, "a", torch.sin, x)
    if with_grad_nodes:
        call(g, "no_grad", torch._C._set_grad_enabled, False)
    e = call(g, "e", torch.cos, a)
    if with_grad_nodes:
        call(g, "grad", torch._C._set_grad_enabled, True)
    g.output((call(g, "total", torch.add, e, a), a))
    return GM(torch.nn.Module(), g)


def policy(ids: Mapping[str, int]) -> Callable[[Node], int]:
    def callback(node: Node) -> int:
        return ids[node.name]

    return callback


ONE_PER_CALL = {"a": 0, "no_grad": 1, "e": 2, "grad": 3, "total": 4}


@pytest.mark.spec("SPL-8", "SPL-11")
def test_05_exercise_1() -> None:
    """SPL-8: with `keep_original_order=True` both use the first-appearance order, which is
    topological here; it runs every partition at its place, so SPL-11 holds as well."""
    plan = plan_split(b6_graph(), policy(ONE_PER_CALL), keep_original_order=True)
    assert plan.order == plan.upstream_order == (0, 1, 2, 3, 4)
    default = plan_split(b6_graph(), policy(ONE_PER_CALL))
    assert default.upstream_order == (3, 1, 0, 2, 4)


@pytest.mark.spec("SPL-3", "SPL-9", "SPL-13")
def test_05_exercise_2() -> None:
    """SPL-3: `a` is partition 0's only output and partition 1's only input. SPL-9: the
    `no_grad` region spans both, so partition 1 begins with a copy of `_set_grad_enabled(False)`
    (partition 0 holds the original). SPL-13: the results keep eager's `requires_grad`."""
    gm = b6_graph()
    ids = {"a": 0, "no_grad": 0, "e": 1, "grad": 1, "total": 1}
    plan = plan_split(gm, policy(ids))
    nodes = order(gm)
    p0, p1 = plan.partitions
    assert ([nodes[i] for i in p0.outputs], [nodes[i] for i in p1.inputs]) == (["a"], ["a"])
    assert ([nodes[i] for i in p0.preludes], [nodes[i] for i in p1.preludes]) == ([], ["no_grad"])
    split = split_module(gm, None, policy(ids))
    first = next(iter(child(split, "submod_1").graph.nodes))
    assert (first.target, first.args) == (torch._C._set_grad_enabled, (False,))
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    total, a = split(x)
    expected = torch.cos(torch.sin(x)).detach() + torch.sin(x)
    torch.testing.assert_close(total, expected)
    assert total.requires_grad and a.requires_grad and torch.is_grad_enabled()


@pytest.mark.spec("SPL-10")
def test_05_exercise_3() -> None:
    """SPL-10: with a grad node, ids must not decrease (a grad region must be contiguous);
    without one, partition 1 simply runs before partition 0."""
    ids = {"a": 1, "no_grad": 0, "e": 2, "grad": 3, "total": 4}
    with pytest.raises(FxOracleError, match="highest: 1, this node's: 0"):
        plan_split(b6_graph(), policy(ids))
    plain = b6_graph(with_grad_nodes=False)
    swapped = {"a": 1, "e": 0, "total": 0}
    assert plan_split(plain, policy(swapped)).order == (1, 0)
    x = torch.tensor([0.5, 1.0])
    torch.testing.assert_close(split_module(plain, None, policy(swapped))(x), plain(x))


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
    """CHK-6: tensors on the meta device have no values, so the numbers are Unknown. CHK-7:
    nothing is violated, yet the report is not ok: unknown is never a pass."""
    original, transformed, _ = dedup
    meta = (torch.empty(4, device="meta"), torch.empty(4, device="meta"))
    report = check_transformation(original, transformed, meta)
    assert report.violations == ()
    assert [o.id for o in report.unknowns] == [NUMBERS] and not report.ok
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
