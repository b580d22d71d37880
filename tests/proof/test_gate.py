"""The replacer's gate (spec chapter 06, CHK-11 and CHK-12): it refuses a group whose contraction
closes a cycle or whose regions' shapes differ, and changes nothing when every group is
provable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest
import torch
import torch.fx

from checker.proof.gate import make_gate
from reference.capture import Capture, capture
from reference.dedup import deduplicate, outline_groups
from reference.deps import OrderingDeps
from reference.graph_copy import copy_graph_module
from reference.outline import plan_outline
from tests.support.corpus import CORPUS_DIR, load_model_file

pytestmark = pytest.mark.filterwarnings("ignore")

Node = torch.fx.Node


def crossing() -> tuple[torch.fx.GraphModule, dict[str, Node]]:
    """a_k = sin(x_k), b_k = add(a_k, a_{1-k}): region k = [a_k, b_k] is convex alone, but
    region 0 feeds region 1 (a_0 -> b_1) and region 1 feeds region 0 (a_1 -> b_0)."""
    graph = torch.fx.Graph()
    x0, x1 = graph.placeholder("x0"), graph.placeholder("x1")
    a0, a1 = graph.call_function(torch.sin, (x0,)), graph.call_function(torch.sin, (x1,))
    b0 = graph.call_function(torch.add, (a0, a1))
    b1 = graph.call_function(torch.add, (a1, a0))
    graph.output((b0, b1))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    return gm, {n.name: n for n in gm.graph.nodes}


def regions(nodes: dict[str, Node], *names: Sequence[str]) -> list[list[Node]]:
    return [[nodes[n] for n in region] for region in names]


@pytest.mark.spec("CHK-11")
def test_chk11_refuses_regions_that_are_convex_alone_but_cyclic_together() -> None:
    gm, nodes = crossing()
    group = regions(nodes, ["sin", "add"], ["sin_1", "add_1"])
    for region in group:  # each region alone contracts without a cycle
        assert make_gate(gm)([region], plan_outline([region])) is None
    refusal = make_gate(gm)(group, plan_outline(group))
    assert refusal == (0, "CHK-11: contracting the regions closes the cycle region 0 -> region 1 "
                          "-> region 0")  # fmt: skip


@pytest.mark.spec("CHK-11")
def test_chk11_extra_deps_join_the_contracted_graph() -> None:
    """A dependency x -> y across two regions closes a cycle the data edges alone do not."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    s0 = graph.call_function(torch.sin, (x,))
    c0 = graph.call_function(torch.cos, (s0,))
    s1 = graph.call_function(torch.sin, (x,))
    c1 = graph.call_function(torch.cos, (s1,))
    graph.output((c0, c1))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    group = [[s0, c0], [s1, c1]]
    assert make_gate(gm)(group, plan_outline(group)) is None
    deps = {s1: [c0], s0: [c1]}  # each region must follow the other
    refusal = make_gate(gm, deps)(group, plan_outline(group))
    assert refusal is not None and refusal[1].startswith("CHK-11:")


@pytest.mark.spec("CHK-11")
def test_chk11_regions_replaced_by_earlier_groups_stay_contracted() -> None:
    """Group 0 = {sin, exp} per input; group 1 = {cos, neg}: each alone is fine, but once group
    0 is an invoke, group 1's region feeds it (cos -> exp) and reads it (sin -> neg)."""
    graph = torch.fx.Graph()
    found: list[list[Node]] = []
    outputs: list[Node] = []
    for name in ("x", "y"):
        v = graph.placeholder(name)
        p, w = graph.call_function(torch.sin, (v,)), graph.call_function(torch.cos, (v,))
        u, q = graph.call_function(torch.neg, (p,)), graph.call_function(torch.exp, (w,))
        found.append([p, w, u, q])
        outputs += [u, q]
    graph.output(tuple(outputs))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    first = [[r[0], r[3]] for r in found]
    second = [[r[1], r[2]] for r in found]
    result = outline_groups(gm, [first, second], {}, make_gate(gm))
    assert [r.group for r in result.replaced] == [0, 0]
    (refused,) = result.refused
    assert (refused.group, refused.region) == (1, 0)
    assert refused.detail == (
        "CHK-11: contracting the regions closes the cycle region 0 -> replaced [sin, exp] "
        "-> region 0"
    )


def _dynamic() -> Capture:
    info = load_model_file(CORPUS_DIR / "own_dynamic.py")
    return capture(info.model, info.example_inputs, info.dynamic)


@pytest.mark.spec("CHK-12")
def test_chk12_refuses_unequal_symbolic_shapes_with_a_model() -> None:
    """own_dynamic: the block on x (s77 x s27) and on y (s17 x s94) are not merged by the key;
    forced into one group, the gate proves their sizes can differ."""
    c = _dynamic()
    nodes = {n.name: n for n in c.gm.graph.nodes}
    group = regions(nodes, ["mul", "relu", "sum_1", "add"], ["mul_1", "relu_1", "sum_2", "add_1"])
    refusal = make_gate(c.gm)(group, plan_outline(group))
    assert refusal is not None
    region, reason = refusal
    assert region == 1
    assert reason.startswith("CHK-12: shapes of mul_1 and mul differ: sizes: SHP-12: dim 0: ")
    assert "s17" in reason and "s77" in reason


@pytest.mark.spec("CHK-12")
def test_chk12_allows_a_normal_group() -> None:
    c = _dynamic()
    nodes = {n.name: n for n in c.gm.graph.nodes}
    group = regions(nodes, ["mul", "relu", "sum_1", "add"], ["mul_2", "relu_2", "sum_3", "add_2"])
    assert make_gate(c.gm)(group, plan_outline(group)) is None


def _code(gm: torch.fx.GraphModule) -> str:
    return gm.code + "".join(f"{name}:{m.code}" for name, m in gm.named_children())


@pytest.mark.parametrize(
    "name",
    [
        "d01_single_subgraph.py",
        "d03_multiple_subgraphs.py",
        "d05_input_mutation.py",
        "d15_mutation_ordering.py",
        "d17_tuple_inputs.py",
        "own_autocast_bf16.py",
        "own_dynamic.py",
        "own_tuple_chunk.py",
        "t07_global_state_no_grad.py",
    ],
)
@pytest.mark.spec("CHK-11", "CHK-12")
def test_chk11_chk12_the_gate_changes_nothing_when_every_group_is_provable(name: str) -> None:
    info = load_model_file(CORPUS_DIR / name)
    plain = capture(info.model, info.example_inputs, info.dynamic)
    deduplicate(plain.gm, plain.tracker)
    gated = capture(info.model, info.example_inputs, info.dynamic)
    mutated = {n: tuple(p) for n, p in gated.tracker.node_to_mutated_arg_positions.items()}
    deps = OrderingDeps.from_graph(gated.gm.graph, mutated)
    result = deduplicate(gated.gm, gated.tracker, gate=make_gate(gated.gm, deps))
    assert [r.detail for r in result.refused if r.detail.startswith("CHK-")] == []
    assert _code(gated.gm) == _code(plain.gm)


@pytest.mark.spec("CHK-11")
def test_chk11_the_gate_refuses_b13_the_split_mutation() -> None:
    """own_inplace_inside: add_ and relu_ sit between t and h outside the region [t, h]."""
    info = load_model_file(CORPUS_DIR / "own_inplace_inside.py")
    c = capture(info.model, info.example_inputs, info.dynamic)
    mutated = {n: tuple(p) for n, p in c.tracker.node_to_mutated_arg_positions.items()}
    gate = make_gate(c.gm, OrderingDeps.from_graph(c.gm.graph, mutated))
    original = copy_graph_module(c.gm).gm
    result = deduplicate(c.gm, c.tracker, gate=gate)
    (refused,) = result.refused
    assert refused.detail == (
        "CHK-11: contracting the regions closes the cycle region 0 -> add_ -> relu_ -> region 0"
    )
    assert c.gm.code == original.code


@pytest.mark.spec("CHK-11")
def test_chk11_the_gate_is_linear_per_group_on_a_10k_node_chain() -> None:
    """40 groups of 2 regions on a chain of 10,000 nodes: the gate accepts all of them, and
    costs one search per group over what the regions reach (no rebuild)."""
    graph = torch.fx.Graph()
    chain = [graph.placeholder("x")]
    for i in range(10_000):
        chain.append(graph.call_function(torch.sin if i % 2 == 0 else torch.cos, (chain[-1],)))
    graph.output(chain[-1])
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    groups = [[chain[1 + 200 * g : 3 + 200 * g], chain[101 + 200 * g : 103 + 200 * g]]
              for g in range(40)]  # fmt: skip
    start = time.perf_counter()
    gate = make_gate(gm)
    refusals = [gate(group, plan_outline(group)) for group in groups]
    elapsed = time.perf_counter() - start
    assert refusals == [None] * 40
    assert elapsed < 10.0, f"gate took {elapsed:.2f} s"
