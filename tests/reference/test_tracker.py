"""Live and offline tracking (spec chapter 01)."""

from __future__ import annotations

import operator

import torch
import torch._dynamo.output_graph as output_graph

from reference.dynamo.capture import Capture, capture, dynamo_tracker
from reference.expand.regions import find_identical_regions
from reference.names import qualified_name
from reference.track.keys import ORIGIN_META, Origin
from reference.track.offline import track_graph
from reference.track.tracker import GraphRegionTracker


def _regions(c: Capture) -> list[list[list[str]]]:
    groups = c.tracker.get_identical_regions(c.gm.graph)
    return [[[n.name for n in r] for r in g] for g in groups]


def _mutations(c: Capture) -> dict[str, list[int]]:
    found = c.tracker.node_to_mutated_arg_positions
    return {n.name: sorted(p) for n, p in found.items()}


def _j(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x1 = x * 1
    y1 = y + 1
    return x1 + y1.sum()


def test_trk2_global_state_splits_buckets() -> None:
    """TRK-2 (T7): calls under no_grad never merge with calls under grad mode."""

    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        o4, o5 = _j(x, y), _j(x, y)
        with torch.no_grad():
            o0, o2 = _j(x, y), _j(x, y)
        return o0 + o2 + o4 + o5

    c = capture(fn, (torch.rand(10, 10, requires_grad=True), torch.rand(10, 10)))
    groups = _regions(c)
    assert len(groups) == 2 and all(len(g) == 2 and len(g[0]) == 4 for g in groups)
    keys = [{c.tracker.node_to_key[n].global_state.grad_enabled for n in g[0]} for g in
            c.tracker.get_identical_regions(c.gm.graph)]  # fmt: skip
    assert sorted(k.pop() for k in keys) == [False, True]


def test_trk3_two_lines_do_not_merge() -> None:
    """TRK-3: the same code on two lines never merges; a loop over one line does."""

    def two_lines(x: torch.Tensor) -> torch.Tensor:
        a = (x + 1).sin()
        b = (x + 1).sin()
        return a + b

    def loop(x: torch.Tensor) -> torch.Tensor:
        out = x
        for _ in range(2):
            out = out + (x + 1).sin()
        return out

    x = torch.rand(4)
    assert _regions(capture(two_lines, (x,))) == []
    assert [len(g) for g in _regions(capture(loop, (x,)))] == [2]


def _one_line_two_multiplies(x: torch.Tensor, y: torch.Tensor, use_self: bool) -> torch.Tensor:
    a = x + 1
    return a * a if use_self else a * y


def test_trk3_one_line_two_instructions_do_not_merge() -> None:
    """TRK-3: the call site is the instruction, not only the line. Two multiplies on one line
    never share a key: what Python 3.12 and later make of `a * (a if use_self else y)`, whose
    multiply the compiler copies into both branches (the RPL-6 test found no group on a GPU
    machine's Python for that reason, not for its TF32 flags)."""

    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _one_line_two_multiplies(x, y, False) + _one_line_two_multiplies(x, y, True)

    c = capture(fn, (torch.rand(3), torch.rand(3)))
    muls = [n for n in c.gm.graph.nodes if n.target is operator.mul]
    sites = [o.call_site for o in map(c.tracker.origin, muls) if o is not None]
    assert len(sites) == 2 and sites[0] is not None and sites[1] is not None
    assert sites[0].line == sites[1].line and sites[0].offset != sites[1].offset
    assert c.tracker.node_to_key[muls[0]] != c.tracker.node_to_key[muls[1]]
    assert _regions(c) == []


def test_trk8_mutations_live() -> None:
    """TRK-8 (T8, T9): version-counter mutations and Dynamo's setitem, by flat position."""

    def t8(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        x0 = torch.sin(x)
        y0 = torch.cos(y)
        z.sin_()
        y0.add_(z)
        return x0.sum() + y0.sum()

    def t9(x: torch.Tensor) -> torch.Tensor:
        y = x + 1
        y[0] = 3
        return y

    c8 = capture(t8, (torch.rand(3), torch.rand(3), torch.rand(3)))
    assert _mutations(c8) == {"sin_": [0], "add_": [0]}
    assert _mutations(capture(t9, (torch.rand(3),))) == {"setitem": [0]}


def test_trk8_mutations_offline() -> None:
    """TRK-8: offline, mutations come from names and schemas."""

    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = x + 1
        z.add_(y)
        z += 2
        torch.add(x, y, out=z)
        return z

    c = capture(fn, (torch.rand(3), torch.rand(3)))
    found = track_graph(c.gm.graph).node_to_mutated_arg_positions
    offline = {qualified_name(n.target): sorted(p) for n, p in found.items()}
    assert offline == {"add_": [0], "operator.iadd": [0], "torch.add": [2]}, offline


def test_trk9_hook_installs_and_restores() -> None:
    """TRK-9: inside the hook Dynamo builds our tracker; outside, torch's class is back."""
    original = getattr(output_graph, "GraphRegionTracker")  # noqa: B009
    with dynamo_tracker():
        assert getattr(output_graph, "GraphRegionTracker") is GraphRegionTracker  # noqa: B009
        assert torch._dynamo.config.track_nodes_for_deduplication
    assert getattr(output_graph, "GraphRegionTracker") is original  # noqa: B009
    assert not torch._dynamo.config.track_nodes_for_deduplication


def _inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = x + 1
    y0 = y + 2
    return x0.sum() + y0.sum()


def test_trk10_offline_matches_live_regions() -> None:
    """TRK-10 (T1): keying from metadata finds the same regions as live tracking."""

    def t1(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        o0 = _inner(x, y)
        o1 = torch.sin(y)
        o2 = _inner(x, o1)
        o3 = _inner(x, y)
        o4 = o3 * o3
        return o2 * o4 + o0

    c = capture(t1, (torch.rand(10, 10), torch.rand(10, 20)))
    live = _regions(c)
    offline = find_identical_regions(c.gm.graph, track_graph(c.gm.graph))
    assert [[[n.name for n in r] for r in g] for g in offline] == live
    assert live == [
        [["x0", "y0", "sum_1", "sum_2", "o0"], ["x0_1", "y0_1", "sum_3", "sum_4", "o2"],
         ["x0_2", "y0_2", "sum_5", "sum_6", "o3"]]
    ]  # fmt: skip


def _same_line(x: torch.Tensor) -> torch.Tensor:
    a, b = x.sin(), x.sin()
    with torch.no_grad():
        c = x.sin()
    return a + b + c


def test_trk2_capture_stores_each_node_s_call_site_and_global_state() -> None:
    """TRK-2, TRK-6: the parts of a key node metadata lacks (the bytecode offset, the global
    state at tracking time) are on every keyed node as `meta[ORIGIN_META]`, copies included,
    and equal the key's."""
    c = capture(_same_line, (torch.randn(3, requires_grad=True),)).copy()
    sins = [n for n in c.gm.graph.nodes if n.op == "call_method" and n.target == "sin"]
    origins = [n.meta[ORIGIN_META] for n in sins]
    assert all(isinstance(o, Origin) for o in origins)
    assert [o == c.tracker.origin(n) for o, n in zip(origins, sins, strict=True)] == [True] * 3
    a, b, under_no_grad = origins
    assert a.call_site and b.call_site and a.call_site.line == b.call_site.line
    assert a.call_site.offset != b.call_site.offset, "same line, other instructions"
    assert a.global_state.grad_enabled and not under_no_grad.global_state.grad_enabled
    assert c.tracker.node_to_key[sins[0]] != c.tracker.node_to_key[sins[1]]
