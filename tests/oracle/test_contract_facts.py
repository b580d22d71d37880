"""What `CapturedGraph` documents is what a plug-in gets (spec chapter 08, DIF-21): mutation
facts in the flat-node-argument convention, each node's call site and global state, buckets
with single nodes and placeholders, the state methods run in, and recompilation done for it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from checker.course.ex_11 import writes
from checker.io.model_file import Model
from checker.oracle.compare.run import capture_for, diff_capture
from checker.oracle.protocol import ORIGIN_META, CapturedGraph, DedupOutput, Origin
from checker.oracle.sides.sides import Component, make_sides
from reference.dynamo.capture import Capture, capture
from reference.fx_helpers import flat_node_args

Node = torch.fx.Node


def _written(graph: CapturedGraph) -> dict[str, list[str]]:
    """`node -> the names of the argument nodes it writes`, by the documented convention."""
    found = {}
    for node, positions in graph.tracker.node_to_mutated_arg_positions.items():
        flat = flat_node_args(node)
        found[node.name] = [flat[p].name for p in positions]
    return found


@pytest.mark.spec("DIF-21")
def test_dif21_mutation_positions_index_the_flat_node_arguments() -> None:
    inputs = (torch.randn(4), torch.randn(4), torch.tensor([1, 2]))
    graph = capture(writes, inputs)  # chapter 11's exercise model
    by_target = {str(getattr(n.target, "__name__", n.target)): n.name for n in graph.gm.graph.nodes}
    written = _written(graph)
    assert written[by_target["add_"]] == ["l_x_"]  # x.add_(y): position 0
    assert written[by_target["setitem"]] == ["l_y_"]  # y[i] = 0.5, a node index: position 0
    assert written[by_target["add"]] == ["c"]  # torch.add(x, y, out=c): position 2
    assert len(written) == 3  # a node that writes nothing is absent


def _one_line(x: torch.Tensor) -> torch.Tensor:
    a, b = x.sin(), x.sin()  # two calls on one line
    with torch.no_grad():
        c = x.cos()
    return a + b + c


@pytest.mark.spec("DIF-21")
def test_dif21_each_node_carries_its_call_site_and_global_state() -> None:
    graph = capture(_one_line, (torch.randn(3, requires_grad=True),))
    nodes = {n.name: n for n in graph.gm.graph.nodes}
    origins = {name: graph.tracker.origin(n) for name, n in nodes.items()}
    calls = [origins[n.name] for n in nodes.values() if n.op == "call_method"]
    sin, sin_1, cos = calls
    assert isinstance(sin, Origin) and isinstance(sin_1, Origin) and isinstance(cos, Origin)
    assert sin.call_site is not None and sin_1.call_site is not None
    assert sin.call_site.line == sin_1.call_site.line
    assert sin.call_site.offset != sin_1.call_site.offset  # two calls on one line differ
    assert sin.global_state.grad_enabled and not cos.global_state.grad_enabled
    assert all(nodes[k].meta[ORIGIN_META] == o for k, o in origins.items() if o is not None)


@pytest.mark.spec("DIF-21")
def test_dif21_buckets_hold_single_nodes_and_placeholders() -> None:
    graph = capture(_one_line, (torch.randn(3, requires_grad=True),))
    buckets = graph.tracker.buckets().groups
    assert any(len(b) == 1 for b in buckets)
    assert any(n.op == "placeholder" for b in buckets for n in b)
    order = {n: i for i, n in enumerate(graph.gm.graph.nodes)}
    assert all(list(b) == sorted(b, key=order.__getitem__) for b in buckets)


def _state() -> tuple[Any, ...]:
    return (torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
            torch.is_autocast_enabled("cpu"), len(_get_current_dispatch_mode_stack()),
            torch.compiler.is_compiling())  # fmt: skip


class _Probe:
    """Records the state each method runs in. Its pass leaves the graph as it was but its code
    stale: the code computes zeros, and only a recompile from the graph computes the model."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def find_regions(self, graph: CapturedGraph) -> tuple[()]:
        self.seen.append(_state())
        return ()

    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        self.seen.append(_state())
        gm = graph.gm
        output = next(n for n in gm.graph.nodes if n.op == "output")
        result = output.args[0]
        with gm.graph.inserting_before(output):
            zeros = gm.graph.call_function(torch.zeros_like, (result,))
        output.args = (zeros,)
        gm.recompile()  # the code now returns zeros
        output.args = (result,)
        gm.graph.erase_node(zeros)  # the graph is the model's again, the code is not
        return DedupOutput(gm)

    def stable_sort(self, graph: torch.fx.Graph, deps: Any) -> None:
        self.seen.append(_state())


@pytest.mark.spec("DIF-21")
def test_dif21_methods_run_with_grad_on_no_mode_and_need_not_recompile() -> None:
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x.sin() * 2 + x.cos() * 2

    probe = _Probe()
    parts = (Component.TRACKER, Component.DEDUP, Component.SORT)
    sides = replace(make_sides("reference"), other=probe, label="probe", components=parts)
    graph = capture_for(Model("twice", twice, (torch.randn(4),), False, ""), sides)
    assert isinstance(graph, Capture)
    found = diff_capture(graph, sides)
    assert len(probe.seen) >= 3 and set(probe.seen) == {(True, False, False, 0, False)}
    assert not [d for d in found if d.component is Component.DEDUP and d.blame.blames_a_side], [
        d.detail for d in found
    ]
