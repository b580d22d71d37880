"""Tests for the extra ordering dependencies through region replacement (spec chapter 04, SRT).

torch 2.13's scenarios D13 (autocast ordering) and D15 (mutation ordering) after dedup, and
`redirect` on erasure: compared with torch's per-erasure rescan as ordered lists of names, and
with `inherit=True`, which keeps the constraints torch's update drops.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Mapping, Sequence
from typing import cast

import pytest
import torch
from torch._dynamo.graph_deduplication import _stable_topological_sort
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
from torch.fx import Graph, GraphModule, Node
from torch.utils._ordered_set import OrderedSet

from reference.deps import OrderingDeps
from reference.order import stable_topological_sort
from tests.test_deps import (
    TorchDeps,
    by_name,
    call,
    named,
    names,
    random_graph,
    torch_deps,
    torch_redirect,
)


def as_torch(deps: Mapping[Node, Sequence[Node]]) -> TorchDeps:
    return {k: OrderedSet(v) for k, v in deps.items()}


# ---- torch's scenarios D13 (autocast ordering) and D15 (mutation ordering) -----------------------

aten = torch.ops.aten
invoke_subgraph = torch.ops.higher_order.invoke_subgraph


def _d13_graph() -> Graph:
    """The AOT forward graph of torch's D13/D14 after dedup: views, then two invokes."""
    g = Graph()
    arg0, arg1 = g.placeholder("arg0_1"), g.placeholder("arg1_1")
    view_1 = call(g, "view_1", aten.view.default, call(g, "view", aten.view.default, arg0, [10]))
    view_3 = call(g, "view_3", aten.view.default, call(g, "view_2", aten.view.default, arg0, [10]))
    total = call(g, "add", aten.add.Tensor, view_1, view_3)
    for k, suffix in ((1, ""), (2, "_1")):
        attr = g.create_node("get_attr", "repeated_subgraph0", name=f"repeated_subgraph0{suffix}")
        invoke = call(g, f"invoke_subgraph{suffix}", invoke_subgraph, attr, "s", arg0, arg1)
        item = call(g, f"getitem{suffix}", operator.getitem, invoke, 0)
        summed = call(g, f"sum_{k}", aten.sum.default, item)
        total = call(g, f"add_{k}", aten.add.Tensor, total, summed)
    g.output((total,))
    return g


def _d13_deps_then_shuffle(g: Graph) -> OrderingDeps:
    """Enter after sum_1 and exit after sum_2, deps taken, then enter and exit moved up."""
    nodes = by_name(g)
    nodes["sum_1"].append(call(g, "_enter_autocast", _enter_autocast))
    nodes["sum_2"].append(call(g, "_exit_autocast", _exit_autocast))
    deps = OrderingDeps.from_graph(g, {})
    nodes = by_name(g)
    nodes["invoke_subgraph"].append(nodes["_enter_autocast"])
    nodes["getitem_1"].append(nodes["_exit_autocast"])
    return deps


@pytest.mark.spec("SRT-7", "SRT-2")
def test_srt7_d13_autocast_ordering() -> None:
    """SRT-7, torch D13: the sort puts enter back before add_1 and exit before add_2."""
    g, twin = _d13_graph(), _d13_graph()
    deps = _d13_deps_then_shuffle(g)
    twin_deps = _d13_deps_then_shuffle(twin)
    assert names(g)[8:10] == ["invoke_subgraph", "_enter_autocast"]
    stable_topological_sort(g, deps.as_mapping())
    _stable_topological_sort(twin, as_torch(twin_deps.as_mapping()))
    head = ["arg0_1", "arg1_1", "view", "view_1", "view_2", "view_3", "add"]
    first = ["repeated_subgraph0", "invoke_subgraph", "getitem", "sum_1", "_enter_autocast"]
    second = ["add_1", "repeated_subgraph0_1", "invoke_subgraph_1", "getitem_1", "sum_2"]
    assert names(g) == names(twin) == [*head, *first, *second, "_exit_autocast", "add_2", "output"]


def _d15_inner(g: Graph, x: Node, y: Node, suffixes: Sequence[str]) -> list[Node]:
    """inner_fn2 of D15: `(x * 2).sum() + (y * 2).sum()`, nodes named as Dynamo names them."""
    mul_x = call(g, f"mul{suffixes[0]}", operator.mul, x, 2)
    mul_y = call(g, f"mul{suffixes[1]}", operator.mul, y, 2)
    sum_x = call(g, f"sum{suffixes[2]}", "sum", mul_x)
    sum_y = call(g, f"sum{suffixes[3]}", "sum", mul_y)
    return [mul_x, mul_y, sum_x, sum_y, call(g, f"add{suffixes[4]}", operator.add, sum_x, sum_y)]


def _d15_graph() -> tuple[Graph, dict[Node, list[int]], list[list[Node]]]:
    """D15 before dedup: two view chains, `x.add_(x)`, inner2, `y.mul_(y)`, inner2 again."""
    g = Graph()
    x, y = g.placeholder("l_x_"), g.placeholder("l_y_")
    o0 = call(g, "o0", "view", call(g, "x0", "view", x, (10,)), (10,))
    o1 = call(g, "o1", "view", call(g, "x0_1", "view", x, (10,)), (10,))
    add_ = call(g, "add_", "add_", x, x)
    first = _d15_inner(g, x, y, ("", "_1", "_1", "_2", ""))
    mul_ = call(g, "mul_", "mul_", y, y)
    second = _d15_inner(g, x, y, ("_2", "_3", "_3", "_4", "_1"))
    add_2 = call(g, "add_2", operator.add, o0, o1)
    add_3 = call(g, "add_3", operator.add, add_2, call(g, "sum_5", "sum", first[-1]))
    g.output((call(g, "add_4", operator.add, add_3, call(g, "sum_6", "sum", second[-1])),))
    return g, {add_: [0], mul_: [0]}, [first, second]


def _replace_region(
    g: Graph, region: list[Node], k: int, erased: Callable[[Node, Node], None]
) -> None:
    """The replacer on one region: invoke and getitem appended, region erased in reverse."""
    with g.inserting_before():
        attr = g.get_attr("subgraph_0") if k == 0 else by_name(g)["subgraph_0"]
    x, y = g.find_nodes(op="placeholder")
    invoke = g.create_node("call_function", invoke_subgraph, (attr, "subgraph_0", x, y))
    region[-1].replace_all_uses_with(g.call_function(operator.getitem, (invoke, 0)))
    for node in reversed(region):
        g.erase_node(node)
        erased(node, invoke)


@pytest.mark.spec("SRT-6", "SRT-9", "SRT-2")
def test_srt6_d15_mutation_ordering() -> None:
    """SRT-6/SRT-9, torch D15: after dedup the deps are {add_: [x0, x0_1], mul_: [invoke]};
    mul_ lands between the first invoke and its getitem; after shuffling add_ and mul_ and
    sorting again, add_ stays after add_2 (views only) and mul_ follows the first invoke."""
    g, mutated, regions = _d15_graph()
    twin, twin_mutated, twin_regions = _d15_graph()
    deps, twin_deps = OrderingDeps.from_graph(g, mutated), torch_deps(twin, twin_mutated)
    for k in range(2):
        _replace_region(g, regions[k], k, deps.redirect)
        _replace_region(twin, twin_regions[k], k, lambda e, to: torch_redirect(twin_deps, e, to))
    assert named(deps.as_mapping()) == named(twin_deps)
    assert named(deps.as_mapping()) == [("add_", ["x0", "x0_1"]), ("mul_", ["invoke_subgraph"])]
    views = ["subgraph_0", "l_x_", "l_y_", "x0", "o0", "x0_1", "o1"]
    tail = ["sum_5", "add_3", "invoke_subgraph_1", "getitem_1", "sum_6", "add_4", "output"]
    for shuffle in (False, True):
        if shuffle:
            for graph in (g, twin):
                nodes = by_name(graph)
                nodes["o1"].append(nodes["mul_"])
                nodes["add_2"].append(nodes["add_"])
        stable_topological_sort(g, deps.as_mapping())
        _stable_topological_sort(twin, twin_deps)
        middle = ["add_", "add_2"] if not shuffle else ["add_2", "add_"]
        expected = [*views, *middle, "invoke_subgraph", "mul_", "getitem", *tail]
        assert names(g) == names(twin) == expected, shuffle


# ---- redirect on erasure ---------------------------------------------------------------------


def _erasures(g: Graph, rng: random.Random) -> list[tuple[Node, Node]]:
    """A random erasure sequence: original nodes, each replaced by a fresh call node (as
    torch's invoke, shared by a few erasures) or, rarely, by a surviving original node."""
    originals = [n for n in g.nodes if n.op != "output"]
    erased = rng.sample(originals, k=rng.randint(1, len(originals)))
    survivors = [n for n in originals if n not in erased]
    steps: list[tuple[Node, Node]] = []
    invokes: list[Node] = []
    for node in erased:
        if survivors and rng.random() < 0.1:
            steps.append((node, rng.choice(survivors)))
            continue
        if not invokes or rng.random() < 0.3:
            invokes.append(g.call_function(torch.sin, ()))
        steps.append((node, rng.choice(invokes)))
    return steps


@pytest.mark.torch_diff
@pytest.mark.spec("SRT-9")
def test_srt9_redirect_equals_torch_rescan_on_random_erasures() -> None:
    """SRT-9: after every erasure the deps equal torch's rescan, as ordered lists."""
    for seed in range(120):
        g, mutated = random_graph(seed, with_grad=False)
        ours, theirs = OrderingDeps.from_graph(g, mutated), torch_deps(g, mutated)
        for erased, to in _erasures(g, random.Random(seed)):
            ours.redirect(erased, to)
            torch_redirect(theirs, erased, to)
            assert named(ours.as_mapping()) == named(theirs), f"seed {seed}"


def _lost_constraints(
    original: Mapping[Node, Sequence[Node]], deps: OrderingDeps, steps: list[tuple[Node, Node]]
) -> int:
    """Original edges whose images (through the erasures) are no longer recorded."""
    image = dict(steps)

    def final(node: Node) -> Node:
        while node in image:
            node = image[node]
        return node

    pairs = ((final(k), final(d)) for k, own in original.items() for d in own)
    return sum(1 for k, d in pairs if k is not d and d not in deps.deps_of(k))


@pytest.mark.spec("SRT-10", "SRT-9")
def test_srt10_inherit_keeps_every_constraint_torch_drops_some() -> None:
    """SRT-10: with `inherit=True` every ordering constraint survives the erasures (on the
    images of its ends) and no node lists itself; torch's update loses some."""
    lost_by_torch = 0
    for seed in range(120):
        g, mutated = random_graph(seed, with_grad=False)
        steps = _erasures(g, random.Random(seed))
        for inherit in (True, False):
            deps = OrderingDeps.from_graph(g, mutated)
            original = deps.as_mapping()
            for erased, to in steps:
                deps.redirect(erased, to, inherit=inherit)
            lost = _lost_constraints(original, deps, steps)
            if inherit:
                assert lost == 0, f"seed {seed}"
                assert all(k not in v for k, v in deps.as_mapping().items()), f"seed {seed}"
            lost_by_torch += lost
    assert lost_by_torch > 0


def _region_a(t: torch.Tensor) -> torch.Tensor:
    return (t * 3).sin().sum()


def _region_b(t: torch.Tensor) -> torch.Tensor:
    return (t + 1).cos().sum()


def _region(g: Graph, name: str, t: Node, kind: str) -> list[Node]:
    """A: `(t * 3).sin().sum()`; B: `(t + 1).cos().sum()`, as three nodes."""
    head = call(g, f"{name}0", *((operator.mul, t, 3) if kind == "a" else (operator.add, t, 1)))
    middle = call(g, f"{name}1", torch.sin if kind == "a" else torch.cos, head)
    return [head, middle, call(g, f"{name}2", torch.sum, middle)]


def _late_read_graph() -> tuple[Graph, dict[Node, list[int]], list[list[Node]]]:
    """b1 = B(y); y.mul_(2); a1 = A(y); a2 = A(z); b2 = B(z). Group A is replaced first (its
    first member is later), so a1's call lands before b1's, on which `mul_` waits."""
    g = Graph()
    y, z = g.placeholder("y"), g.placeholder("z")
    b1 = _region(g, "b1_", y, "b")
    mul_ = call(g, "mul_", "mul_", y, 2)
    a1, a2, b2 = _region(g, "a1_", y, "a"), _region(g, "a2_", z, "a"), _region(g, "b2_", z, "b")
    total = b1[-1]
    for region in (a1, a2, b2):
        total = call(g, f"plus_{region[0].name}", operator.add, total, region[-1])
    g.output(total)
    return g, {mul_: [0]}, [a1, a2, b1, b2]


def _replace_by_region_call(
    g: Graph, regions: list[list[Node]], redirect: Callable[[Node, Node], None]
) -> None:
    """Each region becomes one call of `_region_a`/`_region_b` at the graph end."""
    for region in regions:
        target = _region_a if region[0].name.startswith("a") else _region_b
        new = g.call_function(target, (region[0].args[0],))
        region[-1].replace_all_uses_with(new)
        for node in reversed(region):
            g.erase_node(node)
            redirect(node, new)


def _run_late_read(g: Graph) -> torch.Tensor:
    y, z = torch.linspace(0.1, 0.9, 5), torch.linspace(0.0, 2.0, 5)
    return cast(torch.Tensor, GraphModule(torch.nn.Module(), g)(y, z))


def _sorted_late_read(mode: str) -> Graph:
    """The late-read graph after replacement and sort, with torch's deps or ours."""
    g, mutated, regions = _late_read_graph()
    if mode == "torch":
        theirs = torch_deps(g, mutated)
        _replace_by_region_call(g, regions, lambda e, to: torch_redirect(theirs, e, to))
        _stable_topological_sort(g, theirs)
        return g
    deps = OrderingDeps.from_graph(g, mutated)
    inherit = mode == "ours-inherit"
    _replace_by_region_call(g, regions, lambda e, to: deps.redirect(e, to, inherit=inherit))
    stable_topological_sort(g, deps.as_mapping())
    return g


@pytest.mark.spec("SRT-10")
def test_srt10_upstream_dropped_constraint_reads_before_the_mutation() -> None:
    """SRT-10 Upstream: torch's update drops a1's "after mul_" constraint, so the sort runs A(y)
    before `y.mul_(2)`: a wrong result. With `inherit=True` the call keeps it."""
    eager = _run_late_read(_late_read_graph()[0])
    results: dict[str, torch.Tensor] = {}
    for mode in ("torch", "ours", "ours-inherit"):
        g = _sorted_late_read(mode)
        order = names(g)
        results[mode] = _run_late_read(g)
        assert (order.index("_region_a") < order.index("mul_")) == (mode != "ours-inherit")
    torch.testing.assert_close(results["ours-inherit"], eager)
    torch.testing.assert_close(results["ours"], results["torch"])
    assert (results["torch"] - eager).abs().item() > 0.1


@pytest.mark.torch_diff
@pytest.mark.spec("SRT-10")
def test_srt10_upstream_torch_compile_gives_a_wrong_result() -> None:
    """SRT-10 Upstream, end to end: torch 2.13 with `use_graph_deduplication` computes A(y)
    before `y.mul_(2)` in the scenario above (eager and compiled results differ)."""

    def fn(y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        b1 = _region_b(y)
        y.mul_(2)
        return b1 + _region_a(y) + _region_a(z) + _region_b(z)

    y, z = torch.linspace(0.1, 0.9, 5), torch.linspace(0.0, 2.0, 5)
    eager = fn(y.clone(), z)
    flags = {"use_graph_deduplication": True, "inline_single_use_invoke_subgraph": False}
    with torch._dynamo.config.patch(flags):
        compiled = torch.compile(fn, backend="eager", fullgraph=True)(y.clone(), z)
    assert (compiled - eager).abs().item() > 0.1
