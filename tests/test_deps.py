"""Tests for the extra ordering dependencies (spec chapter 04, SRT-6..SRT-10).

Every map is compared with torch 2.13's `_populate_additional_deps` as ordered lists of names
(entry order and dependency order), and `redirect` with torch's per-erasure rescan.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import cast

import pytest
import torch
from torch._dynamo.graph_deduplication import _populate_additional_deps, _stable_topological_sort
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
from torch.fx import Graph, GraphModule, Node
from torch.fx.node import Argument
from torch.utils._ordered_set import OrderedSet

from reference.deps import OrderingDeps
from reference.order import stable_topological_sort

TorchDeps = dict[Node, OrderedSet[Node]]
Named = list[tuple[str, list[str]]]
set_grad = torch._C._set_grad_enabled


def named(mapping: Mapping[Node, Collection[Node]]) -> Named:
    """Non-empty entries as (name, dep names), both in insertion order."""
    return [(k.name, [d.name for d in v]) for k, v in mapping.items() if v]


def torch_deps(graph: Graph, mutated: Mapping[Node, Sequence[int]]) -> TorchDeps:
    return _populate_additional_deps(graph, {n: OrderedSet(p) for n, p in mutated.items()})


def as_torch(deps: Mapping[Node, Sequence[Node]]) -> TorchDeps:
    return {k: OrderedSet(v) for k, v in deps.items()}


def torch_redirect(deps: TorchDeps, erased: Node, to: Node) -> None:
    """torch's update in `_replace_region_with_subgraph`: drop, then rescan every entry."""
    deps.pop(erased, None)
    for own in deps.values():
        if erased in own:
            own.remove(erased)
            own.add(to)


def by_name(graph: Graph) -> dict[str, Node]:
    return {node.name: node for node in graph.nodes}


def names(graph: Graph) -> list[str]:
    return [node.name for node in graph.nodes]


def call(g: Graph, name: str, target: Callable[..., object] | str, *args: object) -> Node:
    """A call_method (string target) or call_function node with a chosen name."""
    op = "call_method" if isinstance(target, str) else "call_function"
    return g.create_node(op, target, cast(tuple[Argument, ...], args), name=name)


# ---- hand-built graphs -----------------------------------------------------------------------


@pytest.mark.spec("SRT-6")
def test_srt6_mutation_orders_direct_users() -> None:
    """SRT-6: earlier direct users of the mutated arg precede the mutator, later ones follow."""
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    a = call(g, "a", torch.sin, x)
    add_ = call(g, "add_", "add_", x, y)
    b = call(g, "b", torch.cos, x)
    mul_ = call(g, "mul_", "mul_", y, b)
    g.output((a, mul_))
    mutated = {add_: [0], mul_: [0]}
    ours = OrderingDeps.from_graph(g, mutated)
    assert named(ours.as_mapping()) == [("add_", ["a"]), ("b", ["add_"]), ("mul_", ["add_"])]
    assert named(ours.as_mapping()) == named(torch_deps(g, mutated))
    assert ours.deps_of(a) == ()


def _pinned_graph(target: Callable[..., object]) -> Graph:
    """x; a = sin(x); pin = target(...); b = cos(a); c = b + a: one pinned node in the middle."""
    g = Graph()
    x = g.placeholder("x")
    a = call(g, "a", torch.sin, x)
    pin = call(g, "pin", target, False) if target is set_grad else call(g, "pin", target)
    b = call(g, "b", torch.cos, a)
    c = call(g, "c", operator.add, b, a)
    if target is _enter_autocast:
        call(g, "leave", _exit_autocast, pin)
    g.output(c)
    return g


@pytest.mark.spec("SRT-7")
def test_srt7_autocast_nodes_keep_their_place() -> None:
    """SRT-7: a pinned node follows every earlier node and precedes every later one; edges to
    its own args are implied (leave's arg is pin)."""
    g = _pinned_graph(_enter_autocast)
    ours = OrderingDeps.from_graph(g, {})
    expected = [
        ("pin", ["x", "a"]),
        ("b", ["pin"]),
        ("c", ["pin"]),
        ("leave", ["x", "a", "b", "c"]),
        ("output", ["pin", "leave"]),
    ]
    assert named(ours.as_mapping()) == expected
    assert named(ours.as_mapping()) == named(torch_deps(g, {}))


@pytest.mark.spec("SRT-7")
def test_srt7_pinning_costs_a_times_n_minus_1_edges() -> None:
    """SRT-7: A argument-free pinned nodes among N nodes give A*(N-1) - A*(A-1)/2 edges."""
    g = Graph()
    x = g.placeholder("x")
    for i in range(196):
        x = call(g, f"n{i}", torch.sin, x)
        if i % 49 == 0:
            call(g, f"pin{i}", _enter_autocast)
    g.output(x)
    n, a = len(g.nodes), 4
    assert n == 202
    ours = OrderingDeps.from_graph(g, {})
    assert ours.edge_count() == a * (n - 1) - a * (a - 1) // 2 == 798
    assert named(ours.as_mapping()) == named(torch_deps(g, {}))


@pytest.mark.spec("SRT-8")
def test_srt8_grad_mode_nodes_are_pinned_unlike_torch() -> None:
    """SRT-8: `_set_grad_enabled` is pinned like autocast; torch pins nothing here."""
    g = _pinned_graph(set_grad)
    expected = [("pin", ["x", "a"]), ("b", ["pin"]), ("c", ["pin"]), ("output", ["pin"])]
    assert named(OrderingDeps.from_graph(g, {}).as_mapping()) == expected
    assert named(OrderingDeps.from_graph(g, {}, pin_grad_mode=False).as_mapping()) == []
    assert named(torch_deps(g, {})) == []


def _grad_region_graph() -> Graph:
    """x; grad off; a = sin(x); grad on; m = a * 2: `a` runs without grad."""
    g = Graph()
    x = g.placeholder("x")
    call(g, "off", set_grad, False)
    a = call(g, "a", torch.sin, x)
    call(g, "on", set_grad, True)
    g.output(call(g, "m", operator.mul, a, 2))
    return g


def _replace_by_call(g: Graph, erased: Node, target: Callable[..., object]) -> Node:
    """The replacer's move: a new call at the graph end takes over the uses of `erased`."""
    new = g.create_node("call_function", target, erased.args, name=f"new_{erased.name}")
    erased.replace_all_uses_with(new)
    g.erase_node(erased)
    return new


def _run(g: Graph, x: torch.Tensor) -> torch.Tensor:
    with torch.enable_grad():
        return cast(torch.Tensor, GraphModule(torch.nn.Module(), g)(x))


@pytest.mark.spec("SRT-8")
def test_srt8_upstream_torch_sort_moves_a_call_out_of_no_grad() -> None:
    """SRT-8 Upstream: after a region inside `no_grad` is replaced by a call at the graph end,
    torch's sort places the call after `_set_grad_enabled(True)`: the result needs grad."""
    x = torch.rand(3, requires_grad=True)
    eager = _run(_grad_region_graph(), x)
    ours_graph, torch_graph = _grad_region_graph(), _grad_region_graph()
    ours = OrderingDeps.from_graph(ours_graph, {})
    theirs = torch_deps(torch_graph, {})
    a = by_name(ours_graph)["a"]
    ours.redirect(a, _replace_by_call(ours_graph, a, torch.sin))
    a = by_name(torch_graph)["a"]
    torch_redirect(theirs, a, _replace_by_call(torch_graph, a, torch.sin))
    stable_topological_sort(ours_graph, ours.as_mapping())
    _stable_topological_sort(torch_graph, theirs)
    assert names(ours_graph) == ["x", "off", "new_a", "on", "m", "output"]
    assert names(torch_graph) == ["x", "off", "on", "new_a", "m", "output"]
    ours_out, torch_out = _run(ours_graph, x), _run(torch_graph, x)
    torch.testing.assert_close(ours_out, eager)
    torch.testing.assert_close(torch_out.detach(), eager)
    assert (eager.requires_grad, ours_out.requires_grad, torch_out.requires_grad) == (
        False,
        False,
        True,
    )


# ---- random graphs with in-place ops, autocast and grad-mode nodes ---------------------------


def _random_graph(seed: int, with_grad: bool) -> tuple[Graph, dict[Node, list[int]]]:
    """Random ops over earlier values: in-place `add_` (position 0), `out=` writes (position
    2), autocast enter/exit pairs and, when `with_grad`, `_set_grad_enabled` nodes."""
    rng = random.Random(seed)
    g = Graph()
    values = [g.placeholder(f"p{i}") for i in range(rng.randint(1, 3))]
    mutated: dict[Node, list[int]] = {}
    enters: list[Node] = []
    for i in range(rng.randint(3, 30)):
        kind, a, b = rng.randrange(7), rng.choice(values), rng.choice(values)
        if kind == 2:
            mutated[call(g, f"add_{i}", "add_", a, b)] = [0]
        elif kind == 3:
            node = g.create_node("call_function", torch.add, (a, b), {"out": rng.choice(values)})
            mutated[node] = [2]
        elif kind == 4:
            enters.append(call(g, f"enter{i}", _enter_autocast, "cpu", torch.bfloat16))
        elif kind == 5 and enters:
            call(g, f"leave{i}", _exit_autocast, enters.pop())
        elif kind == 6 and with_grad:
            call(g, f"grad{i}", set_grad, rng.random() < 0.5)
        else:
            values.append(call(g, f"v{i}", operator.add if kind else torch.sin, a, b))
    g.output(tuple(values))
    return g, mutated


@pytest.mark.torch_diff
@pytest.mark.spec("SRT-6", "SRT-7")
def test_srt7_random_graphs_equal_torch_without_grad_nodes() -> None:
    """SRT-6/SRT-7: with no `_set_grad_enabled` node the deps equal torch's exactly."""
    for seed in range(150):
        g, mutated = _random_graph(seed, with_grad=False)
        ours = OrderingDeps.from_graph(g, mutated)
        assert named(ours.as_mapping()) == named(torch_deps(g, mutated)), f"seed {seed}"


def _edges(mapping: Mapping[Node, Collection[Node]]) -> set[tuple[str, str]]:
    return {(k.name, d.name) for k, v in mapping.items() for d in v}


@pytest.mark.torch_diff
@pytest.mark.spec("SRT-8")
def test_srt8_random_graphs_add_exactly_the_grad_pins() -> None:
    """SRT-8: `pin_grad_mode=False` equals torch; the default adds exactly the pin edges of
    `_set_grad_enabled` nodes (to every other node that is not an arg of the later one)."""
    for seed in range(150):
        g, mutated = _random_graph(seed, with_grad=True)
        theirs = torch_deps(g, mutated)
        unpinned = OrderingDeps.from_graph(g, mutated, pin_grad_mode=False)
        assert named(unpinned.as_mapping()) == named(theirs), f"seed {seed}"
        order = list(g.nodes)
        pins = {
            (later.name, earlier.name)
            for j, later in enumerate(order)
            for earlier in order[:j]
            if set_grad in (later.target, earlier.target) and earlier not in later.all_input_nodes
        }
        extra = _edges(OrderingDeps.from_graph(g, mutated).as_mapping()) - _edges(theirs)
        assert extra == pins - _edges(theirs), f"seed {seed}"


# ---- graphs captured by torch.compile ----------------------------------------------------------


def _capture(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Graph:
    graphs: list[Graph] = []

    def keep(gm: torch.fx.GraphModule, example: object) -> Callable[..., object]:
        graphs.append(gm.graph)
        return gm.forward

    torch.compile(fn, backend=keep, fullgraph=True)(torch.randn(4, 4), torch.randn(4, 4))
    return graphs[0]


def _autocast_and_mutation(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a = x.sin()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = a @ y
    x.add_(1)
    c = b.float() * x
    y.mul_(c.sum())
    return a + c + y


def _with_no_grad(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        c = x * 2
    x.add_(c)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        d = c @ y
    return d.float() + x


def _in_place_positions(g: Graph) -> dict[Node, list[int]]:
    """Mutated positions by hand: every captured `add_`/`mul_` writes its first argument."""
    return {n: [0] for n in g.nodes if n.target in ("add_", "mul_")}


@pytest.mark.torch_diff
@pytest.mark.spec("SRT-6", "SRT-7", "SRT-8")
def test_srt7_captured_graphs_equal_torch() -> None:
    """SRT-6/7/8 on Dynamo graphs: equal to torch (grad nodes unpinned), and pinning adds
    edges exactly when the graph has `_set_grad_enabled` nodes."""
    for fn, has_grad in ((_autocast_and_mutation, False), (_with_no_grad, True)):
        g = _capture(fn)
        mutated = _in_place_positions(g)
        assert len(mutated) == (1 if has_grad else 2)
        theirs = named(torch_deps(g, mutated))
        pinned = named(OrderingDeps.from_graph(g, mutated).as_mapping())
        assert named(OrderingDeps.from_graph(g, mutated, pin_grad_mode=False).as_mapping()) == (
            theirs
        )
        assert (pinned != theirs) == has_grad
        assert any(n.target is _enter_autocast for n in g.nodes)


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
        g, mutated = _random_graph(seed, with_grad=False)
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
        g, mutated = _random_graph(seed, with_grad=False)
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
