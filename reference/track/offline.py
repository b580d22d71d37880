"""Offline keying: the tracker of an already captured graph, from node metadata (spec chapter
01, TRK-10). torch keys live only; this module is what fxoracle adds, the call site read from a
node's `stack_trace` included.

`track_graph(graph)` is the definition, one node at a time through `keys.node_key`.
`reference.fast.keys.track_graph_fast(graph)` returns the same tracker faster (TRK-13;
`tests/reference/test_key_cache.py` proves the two equal): callers that key large graphs (the
CLI's loaders, its torch.compile backend, the bench) call it instead.
"""

from __future__ import annotations

import re
from dataclasses import replace

import torch
import torch.fx

from reference.arguments import expect
from reference.effects.node_effects import writes
from reference.fx_helpers import grad_modes
from reference.track.keys import CallSite, current_global_state
from reference.track.tracker import GraphRegionTracker


def track_graph(graph: torch.fx.Graph) -> GraphRegionTracker:
    """Key every node of a captured graph (TRK-10). The call site is the innermost frame each
    node's `stack_trace` records (the user's line; torch's own files are not in it); argument
    metadata comes from `example_value` (Dynamo) or `val` (export). The global state is the
    process's, except grad mode, which follows the graph's own `_set_grad_enabled` calls.
    Mutated positions are what live capture recorded, else what the op declares (EFF-1, TRK-8)."""
    expect(graph, torch.fx.Graph, "track_graph: graph")  # FIL-6
    tracker = GraphRegionTracker()
    state = current_global_state()
    modes = grad_modes(graph, state.grad_enabled)
    for node in graph.nodes:
        if node.op == "output":
            continue
        here = replace(state, grad_enabled=modes[node])
        tracker.track_with(node, here, call_site_from_stack_trace(node.meta.get("stack_trace")))
        for position in writes(node):
            tracker.add_node_mutation(node, position)
    return tracker


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def call_site_from_stack_trace(stack_trace: str | None) -> CallSite | None:
    """The innermost frame a node's `stack_trace` records (offline mode, TRK-10); no bytecode
    offset. Dynamo leaves torch's own files out of `stack_trace`, so a call inside one of
    torch's `nn` modules has the user's line that called the module."""
    frames = _FRAME.findall(stack_trace or "")
    if not frames:
        return None
    filename, line = frames[-1]
    return CallSite(filename, int(line), None)
