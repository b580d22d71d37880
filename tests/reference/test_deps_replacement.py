"""Tests for the extra ordering dependencies through region replacement (spec chapter 04, SRT).

torch's scenarios D13 (autocast ordering) and D15 (mutation ordering) after dedup, and
`redirect` on erasure: compared with torch's per-erasure rescan as ordered lists of names.
`keep_erased_deps=True`, which keeps the constraints torch's update drops, is in
`tests/reference/test_deps_keep_erased.py`.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Mapping, Sequence

import pytest
import torch
from torch._dynamo.graph_deduplication import _stable_topological_sort
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
from torch.fx import Graph, Node
from torch.utils._ordered_set import OrderedSet

from reference.policy import TORCH
from reference.sort.deps import OrderingDeps
from reference.sort.stable import stable_topological_sort
from tests.reference.test_deps import (
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
    """SRT-6/SRT-9, torch D15 under torch's rules: after dedup the deps are {add_: [x0, x0_1],
    mul_: [invoke]}; mul_ lands between the first invoke and its getitem; after shuffling add_
    and mul_ and sorting again, add_ stays after add_2, which reads the views (torch's rule)."""
    g, mutated, regions = _d15_graph()
    twin, twin_mutated, twin_regions = _d15_graph()
    deps = OrderingDeps.from_graph(g, mutated, policy=TORCH)
    twin_deps = torch_deps(twin, twin_mutated)
    for k in range(2):
        _replace_region(g, regions[k], k, deps.redirect)
        _replace_region(twin, twin_regions[k], k, lambda e, to: torch_redirect(twin_deps, e, to))
    assert named(deps.as_mapping()) == named(twin_deps)
    assert named(deps.as_mapping()) == [("add_", ["x0", "x0_1"]), ("mul_", ["invoke_subgraph"])]
    for shuffle in (False, True):
        if shuffle:
            _shuffle_d15(g)
            _shuffle_d15(twin)
        stable_topological_sort(g, deps.as_mapping())
        _stable_topological_sort(twin, twin_deps)
        middle = ["add_", "add_2"] if not shuffle else ["add_2", "add_"]
        assert names(g) == names(twin) == _d15_order(middle), shuffle


@pytest.mark.spec("SRT-12", "SRT-6")
def test_srt12_d15_the_write_stays_before_the_read_of_its_views() -> None:
    """SRT-12, torch D15 with the reference's rule: `add_2 = o0 + o1` reads views of `x` after
    `x.add_(x)`, so add_ follows the views' creation and add_2 follows add_; after the shuffle
    that lets torch move add_ past add_2, the sort puts it back, as eager runs it."""
    g, mutated, regions = _d15_graph()
    deps = OrderingDeps.from_graph(g, mutated)
    found = dict(named(deps.as_mapping()))
    assert found["add_"] == ["x0", "x0_1", "o0", "o1"] and found["add_2"] == ["add_"]
    for k in range(2):
        _replace_region(g, regions[k], k, deps.redirect)
    _shuffle_d15(g)
    stable_topological_sort(g, deps.as_mapping())
    assert names(g) == _d15_order(["add_", "add_2"])


def _shuffle_d15(graph: Graph) -> None:
    nodes = by_name(graph)
    nodes["o1"].append(nodes["mul_"])
    nodes["add_2"].append(nodes["add_"])


def _d15_order(middle: list[str]) -> list[str]:
    views = ["subgraph_0", "l_x_", "l_y_", "x0", "o0", "x0_1", "o1"]
    tail = ["sum_5", "add_3", "invoke_subgraph_1", "getitem_1", "sum_6", "add_4", "output"]
    return [*views, *middle, "invoke_subgraph", "mul_", "getitem", *tail]


# ---- redirect on erasure ---------------------------------------------------------------------


def random_erasures(g: Graph, rng: random.Random) -> list[tuple[Node, Node]]:
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
        for erased, to in random_erasures(g, random.Random(seed)):
            ours.redirect(erased, to)
            torch_redirect(theirs, erased, to)
            assert named(ours.as_mapping()) == named(theirs), f"seed {seed}"
