"""Tests for the extra ordering dependencies on graphs captured by `torch.compile` (spec
chapter 04, SRT-6..SRT-8).

Dynamo graphs with autocast, in-place updates and `no_grad`: the deps equal torch's
`_populate_additional_deps` with grad-mode nodes unpinned, and pinning adds edges exactly when
the graph has `_set_grad_enabled` nodes. A tracker's positions are used in the order it recorded
them, as torch does. Hand-built and random graphs are in
`tests/reference/test_deps.py`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch.amp.autocast_mode import _enter_autocast
from torch.fx import Graph, Node

from reference.policy import TORCH, Policy
from reference.sort.deps import OrderingDeps, ordering_deps
from tests.reference.test_deps import call, named, torch_deps

UNPINNED = Policy(pin_grad_mode=False)  # torch's grad-mode rule (SRT-8)


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
        assert named(OrderingDeps.from_graph(g, mutated, policy=UNPINNED).as_mapping()) == (theirs)
        assert (pinned != theirs) == has_grad
        assert any(n.target is _enter_autocast for n in g.nodes)


@pytest.mark.spec("SRT-6")
def test_srt6_write_positions_are_used_in_the_recorded_order() -> None:
    """A node recorded as writing positions 1 then 0 (a later `add_node_mutation`): torch lists
    the earlier reader of position 1 first; sorting the positions would list it second."""
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    rx, ry = call(g, "rx", torch.sin, x), call(g, "ry", torch.cos, y)
    w = call(g, "w", "foo_", x, y)
    g.output((rx, ry, w))
    recorded = {w: [1, 0]}  # as the tracker's OrderedSet holds them
    ours = named(ordering_deps(g, recorded, TORCH).as_mapping())
    assert ours == [("w", ["ry", "rx"])]
    assert ours == named(torch_deps(g, recorded))
