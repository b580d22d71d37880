"""Offline keying: the tracker of an already captured graph, from node metadata (spec chapter
01, TRK-10).

`track_graph` is the public entry; `track_graph_plainly` below it is the definition, one node
at a time through `keys.node_key`. The entry runs `fast_keys.track_graph_fast`, which returns
the same tracker faster (TRK-13; `tests/reference/test_key_cache.py` proves them equal).
"""

from __future__ import annotations

from dataclasses import replace

import torch
import torch.fx

from reference.effects.node_effects import writes
from reference.errors import expect
from reference.track.fast_keys import track_graph_fast
from reference.track.keys import GlobalState, call_site_from_stack_trace, current_global_state
from reference.track.tracker import GraphRegionTracker


def track_graph(graph: torch.fx.Graph) -> GraphRegionTracker:
    """Key every node of a captured graph (TRK-10): `track_graph_plainly(graph)`, computed by
    the fast path."""
    expect(graph, torch.fx.Graph, "track_graph: graph")  # FIL-6
    return track_graph_fast(graph)


def track_graph_plainly(graph: torch.fx.Graph) -> GraphRegionTracker:
    """The definition of offline keying. The call site is the innermost frame each node's
    `stack_trace` records (the user's line; torch's own files are not in it); argument metadata
    comes from `example_value` (Dynamo) or `val` (export). The global state is the process's, except
    grad mode, which follows the graph's own `_set_grad_enabled` calls. Mutated positions are what
    live capture recorded, else what the op declares (EFF-1, TRK-8)."""
    tracker = GraphRegionTracker()
    state = current_global_state()
    for node in graph.nodes:
        if node.op == "output":
            continue
        state = state_after(node, state)
        tracker.track_with(node, state, call_site_from_stack_trace(node.meta.get("stack_trace")))
        for position in writes(node):
            tracker.add_node_mutation(node, position)
    return tracker


def state_after(node: torch.fx.Node, state: GlobalState) -> GlobalState:
    """The global state from `node` on: `_set_grad_enabled(b)` switches grad mode (TRK-10)."""
    if node.op == "call_function" and node.target is torch._C._set_grad_enabled:
        return replace(state, grad_enabled=bool(node.args[0]))
    return state
