"""Contraction (spec chapter 03, RPL-25): a group whose regions, contracted to one call each
together with the regions replaced before, would close a dependency cycle is refused, so the
pass never fails its sort on a graph it accepted."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch
import torch.fx

from reference.dynamo.capture import capture
from reference.pipeline import deduplicate, outline_groups
from reference.replace.cycle import Contraction, Cycle
from reference.replace.legality import Refusal
from reference.track.offline import track_graph
from tests.support.corpus import CORPUS_DIR, load_model_file

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


@pytest.mark.spec("RPL-25")
def test_rpl25_regions_convex_alone_but_cyclic_together() -> None:
    gm, nodes = crossing()
    group = regions(nodes, ["sin", "add"], ["sin_1", "add_1"])
    for region in group:  # each region alone contracts without a cycle
        assert Contraction(gm.graph, {}).cycle([region]) is None
    assert Contraction(gm.graph, {}).cycle(group) == Cycle(0, "region 0 -> region 1 -> region 0")


@pytest.mark.spec("RPL-25", "SRT-5", "CHK-11")
def test_rpl25_crossed_regions_are_refused_and_the_pass_never_raises() -> None:
    """Chapter 02's crossed regions through the ungated pass: refused with RPL-25 (torch's pass
    fails its sort here, N10), the graph unchanged and still computing what it did; CHK-11's
    retirement rests on this (no gate is needed for the sort to succeed)."""
    gm, _ = crossing()
    x = (torch.randn(3), torch.randn(3))
    want = gm(*x)
    code = gm.code
    result = deduplicate(gm, track_graph(gm.graph))
    assert [(r.reason, r.detail) for r in result.refused] == [
        (Refusal.CYCLE, "cycle region 0 -> region 1 -> region 0")
    ]
    assert not result.replaced and gm.code == code
    torch.testing.assert_close(gm(*x), want)


@pytest.mark.spec("RPL-25")
def test_rpl25_extra_deps_join_the_contracted_graph() -> None:
    """A dependency x -> y across two regions closes a cycle the data edges alone do not."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    s0 = graph.call_function(torch.sin, (x,))
    c0 = graph.call_function(torch.cos, (s0,))
    s1 = graph.call_function(torch.sin, (x,))
    c1 = graph.call_function(torch.cos, (s1,))
    graph.output((c0, c1))
    group = [[s0, c0], [s1, c1]]
    assert Contraction(graph, {}).cycle(group) is None
    deps = {s1: [c0], s0: [c1]}  # each region must follow the other
    assert Contraction(graph, deps).cycle(group) is not None


@pytest.mark.spec("RPL-25")
def test_rpl25_regions_replaced_by_earlier_groups_stay_contracted() -> None:
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
    result = outline_groups(gm, [first, second], {})
    assert [r.group for r in result.replaced] == [0, 0]
    (refused,) = result.refused
    assert (refused.group, refused.region, refused.reason) == (1, 0, Refusal.CYCLE)
    assert refused.detail == "cycle region 0 -> replaced [sin, exp] -> region 0"


@pytest.mark.spec("RPL-25")
def test_rpl25_forty_groups_on_a_10k_node_chain_are_all_accepted() -> None:
    """40 groups of 2 regions on a chain of 10,000 nodes: no cycle; each costs one search over
    what its regions reach (the contraction is built once, `make bench` times it)."""
    graph = torch.fx.Graph()
    chain = [graph.placeholder("x")]
    for i in range(10_000):
        chain.append(graph.call_function(torch.sin if i % 2 == 0 else torch.cos, (chain[-1],)))
    graph.output(chain[-1])
    groups = [[chain[1 + 200 * g : 3 + 200 * g], chain[101 + 200 * g : 103 + 200 * g]]
              for g in range(40)]  # fmt: skip
    contraction = Contraction(graph, {})
    assert [contraction.cycle(group) for group in groups] == [None] * 40


@pytest.mark.spec("RPL-25", "RPL-9")
def test_rpl25_b13_is_refused_before_any_contraction() -> None:
    """own_inplace_inside (B13): add_ and relu_ sit between t and h outside the region [t, h];
    RPL-9 refuses the regions first, so nothing is left to contract."""
    info = load_model_file(CORPUS_DIR / "own_inplace_inside.py")
    c = capture(info.model, info.example_inputs, info.dynamic)
    code = c.gm.code
    result = deduplicate(c.gm, c.tracker)
    assert {r.reason for r in result.refused} == {Refusal.SPLIT_MUTATION}
    assert c.gm.code == code


@pytest.mark.spec("RPL-5", "RPL-25")
def test_rpl5_a_group_refused_by_its_cycle_takes_no_name() -> None:
    """The crossed group is refused whole (RPL-25): nothing is installed for it, so the next
    group's subgraph is the first name, `subgraph_0` (torch would have taken it, RPL-19)."""
    gm, nodes = crossing()
    with gm.graph.inserting_before(nodes["output"]):
        cos = [gm.graph.call_function(torch.cos, (nodes[x],)) for x in ("x0", "x1")]
    outputs = nodes["output"].args[0]
    assert isinstance(outputs, tuple)
    nodes["output"].args = ((*outputs, *cos),)
    crossed = regions(nodes, ["sin", "add"], ["sin_1", "add_1"])
    result = outline_groups(gm, [crossed, [[cos[0]], [cos[1]]]], {})
    assert [(r.group, r.reason) for r in result.refused] == [(0, Refusal.CYCLE)]
    assert list(result.subgraphs) == ["subgraph_0"]
    assert [(r.group, r.subgraph) for r in result.replaced] == [(1, "subgraph_0")] * 2
