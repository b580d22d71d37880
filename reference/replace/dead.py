"""Dead code around regions (spec chapter 03, RPL-27): a node whose value nothing live reads.

Dynamo leaves nodes whose values nothing reads (an unused `getitem` of `x.shape` whose dimension
was specialised) for a later clean-up. Such a node is no reason for a region to return a value:
a *dead* node is a pure call (it writes nothing, draws nothing, switches nothing, fx finds it
pure), in no region of any group, all of whose users are dead. A region's output position needs
a live user outside it (RPL-3), and replacing a region erases the dead nodes that read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
import torch.fx

from reference.effects.alias_db import AliasDB
from reference.effects.node_effects import switch
from reference.names import INVOKE

Node = torch.fx.Node


def dead_nodes(graph: torch.fx.Graph, db: AliasDB, grouped: Iterable[Node] = ()) -> frozenset[Node]:
    """Every dead node of `graph`: pure calls whose users are all dead (RPL-27). A node of a
    region (`grouped`) is never dead: a later group may still call it, so no earlier
    replacement may erase it."""
    dead: set[Node] = set()
    kept = set(grouped)
    for node in reversed(graph.nodes):
        if node not in kept and _pure(node, db) and all(u in dead for u in node.users):
            dead.add(node)
    return frozenset(dead)


def _pure(node: Node, db: AliasDB) -> bool:
    if node.op not in ("call_function", "call_method") or node.target is INVOKE:
        return False
    if isinstance(node.target, torch._ops.HigherOrderOperator) or switch(node) is not None:
        return False
    return not db.writes(node) and not node.is_impure()


def dead_readers(region: Iterable[Node], dead: frozenset[Node]) -> list[Node]:
    """The dead nodes reading `region`'s nodes, directly or through other dead nodes, in
    graph order (a producer before its users)."""
    inside = set(region)
    found: dict[Node, None] = {}
    stack = [u for n in inside for u in n.users if u in dead and u not in inside]
    while stack:
        node = stack.pop()
        if node not in found:
            found[node] = None
            stack.extend(node.users)
    return _in_graph_order(found)


def _in_graph_order(nodes: Sequence[Node] | dict[Node, None]) -> list[Node]:
    if not nodes:
        return []
    order = {n: i for i, n in enumerate(next(iter(nodes)).graph.nodes)}
    return sorted(nodes, key=order.__getitem__)
