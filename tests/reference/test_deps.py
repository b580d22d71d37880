"""Tests for building the extra ordering dependencies (spec chapter 04, SRT-6..SRT-8).

Every map is compared with torch's `_populate_additional_deps` as ordered lists of names
(entry order and dependency order), on hand-built and random graphs. Graphs captured by
`torch.compile` are in `tests/reference/test_deps_captured.py`; the deps through region replacement
(torch's D13 and D15, `redirect`) are in `tests/reference/test_deps_replacement.py`.
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

from reference.policy import Policy
from reference.sort.deps import OrderingDeps
from reference.sort.stable import stable_topological_sort

UNPINNED = Policy(pin_grad_mode=False)  # torch's grad-mode rule (SRT-8)

TorchDeps = dict[Node, OrderedSet[Node]]
Named = list[tuple[str, list[str]]]
set_grad = torch._C._set_grad_enabled


def named(mapping: Mapping[Node, Collection[Node]]) -> Named:
    """Non-empty entries as (name, dep names), both in insertion order."""
    return [(k.name, [d.name for d in v]) for k, v in mapping.items() if v]


def torch_deps(graph: Graph, mutated: Mapping[Node, Sequence[int]]) -> TorchDeps:
    return _populate_additional_deps(graph, {n: OrderedSet(p) for n, p in mutated.items()})


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
    assert sum(map(len, ours.as_mapping().values())) == a * (n - 1) - a * (a - 1) // 2 == 798
    assert named(ours.as_mapping()) == named(torch_deps(g, {}))


@pytest.mark.spec("SRT-8")
def test_srt8_grad_mode_nodes_are_pinned_unlike_torch() -> None:
    """SRT-8: `_set_grad_enabled` is pinned like autocast; torch pins nothing here."""
    g = _pinned_graph(set_grad)
    expected = [("pin", ["x", "a"]), ("b", ["pin"]), ("c", ["pin"]), ("output", ["pin"])]
    assert named(OrderingDeps.from_graph(g, {}).as_mapping()) == expected
    assert named(OrderingDeps.from_graph(g, {}, policy=UNPINNED).as_mapping()) == []
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


def random_graph(seed: int, with_grad: bool) -> tuple[Graph, dict[Node, list[int]]]:
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
        g, mutated = random_graph(seed, with_grad=False)
        ours = OrderingDeps.from_graph(g, mutated)
        assert named(ours.as_mapping()) == named(torch_deps(g, mutated)), f"seed {seed}"


def _edges(mapping: Mapping[Node, Collection[Node]]) -> set[tuple[str, str]]:
    return {(k.name, d.name) for k, v in mapping.items() for d in v}


@pytest.mark.torch_diff
@pytest.mark.spec("SRT-8")
def test_srt8_random_graphs_add_exactly_the_grad_pins() -> None:
    """SRT-8: `policy=UNPINNED` equals torch; the default adds exactly the pin edges of
    `_set_grad_enabled` nodes (to every other node that is not an arg of the later one)."""
    for seed in range(150):
        g, mutated = random_graph(seed, with_grad=True)
        theirs = torch_deps(g, mutated)
        unpinned = OrderingDeps.from_graph(g, mutated, policy=UNPINNED)
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


@pytest.mark.spec("SRT-12", "EFF-2")
def test_srt12_a_read_through_a_view_follows_the_write_before_it() -> None:
    """`v = x.view(-1); r1 = v * 2; x.add_(1); r2 = v * 3`: the write follows the read of the
    view before it and precedes the one after it; torch's rule (SRT-6) orders only the view."""
    g = Graph()
    x = g.placeholder("x")
    v = call(g, "v", "view", x, -1)
    r1 = call(g, "r1", operator.mul, v, 2)
    add_ = call(g, "add_", "add_", x, 1)
    r2 = call(g, "r2", operator.mul, v, 3)
    g.output((r1, r2))
    ours = dict(named(OrderingDeps.from_graph(g, {add_: [0]}).as_mapping()))
    assert ours == {"add_": ["v", "r1"], "r2": ["add_"]}
    assert named(torch_deps(g, {add_: [0]})) == [("add_", ["v"])]
    torch_rules = Policy(order_aliases=False)
    assert named(OrderingDeps.from_graph(g, {add_: [0]}, policy=torch_rules).as_mapping()) == [
        ("add_", ["v"])
    ]


@pytest.mark.spec("SRT-13", "EFF-4")
def test_srt13_draws_keep_their_order() -> None:
    """Each draw follows the one before it; torch leaves draws free (order_draws=False)."""
    g = Graph()
    x = g.placeholder("x")
    a = call(g, "a", torch.rand_like, x)
    s = call(g, "s", torch.sin, x)
    b = call(g, "b", torch.nn.functional.dropout, s)
    g.output((a, b))
    assert named(OrderingDeps.from_graph(g, {}).as_mapping()) == [("b", ["a"])]
    assert (
        named(OrderingDeps.from_graph(g, {}, policy=Policy(order_draws=False)).as_mapping()) == []
    )
