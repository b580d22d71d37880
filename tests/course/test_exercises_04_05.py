"""Solutions of the exercises at the end of spec chapters 04-05 (issue 8: a course that
cannot rot; the reading path is `specs/course.md`). Chapters 06-07 are in
`tests/course/test_exercises_06_07.py`.

One test per exercise, `test_<chapter>_exercise_<n>`, in chapter order; each docstring states
the answer and names the invariants the exercise is about. The graphs are small and built by
hand where possible: the whole file runs in a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
import torch
import torch.fx

from reference.errors import FxOracleError
from reference.order.deps import OrderingDeps
from reference.order.sort import stable_topological_sort
from reference.split import split_module
from reference.split.plan import plan_split
from tests.support.models import call

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


# ---- 04 sort ----------------------------------------------------------------------------------


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
    deps.redirect(n["after"], inv, keep_erased_deps=inherit)
    stable_topological_sort(gm.graph, deps.as_mapping())
    gm.recompile()
    return gm, deps, inv


@pytest.mark.spec("SRT-9", "SRT-10")
def test_04_exercise_2() -> None:
    """SRT-9: torch's update drops `after`'s own entry, so `inv` has no deps and stays first,
    reading `x` before the write. SRT-10: with `keep_erased_deps=True`, `inv` follows `add_`."""
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
