"""Acyclicity of a transformed graph module, extra ordering dependencies included (spec chapter
06, CHK-2).

`Graph.lint()` only checks that arguments come earlier in node order; a cycle can still hide in
the extra dependencies a pass hands to its sort (`node -> nodes it must follow`). Every graph
of the module tree becomes a networkx digraph (`arg -> user`, and `dep -> node` for the top
level's extra dependencies); a cycle is reported as the shortest one through an edge of the
first cycle networkx finds, starting at its earliest node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import networkx as nx
import torch
import torch.fx

from checker.proof.graphs import graph_modules
from checker.proof.verdict import HOLDS, Verdict, Violated

Node = torch.fx.Node
MAX_CYCLE_EDGES = 64  # edges of the found cycle tried as the start of a shorter one


def check_acyclic(
    gm: torch.fx.GraphModule, extra_deps: Mapping[Node, Sequence[Node]] | None = None
) -> Verdict:
    """Holds when no graph of `gm`'s tree has a cycle through data or extra edges (CHK-2)."""
    for path, module in graph_modules(gm):
        graph = dependency_graph(module.graph, extra_deps if module is gm else None)
        cycle = minimal_cycle(graph)
        if cycle is not None:
            names = " -> ".join(n.name for n in [*cycle, cycle[0]])
            return Violated(f"CHK-2: {path or 'graph'}: cycle {names}")
    return HOLDS


def dependency_graph(
    graph: torch.fx.Graph, extra_deps: Mapping[Node, Sequence[Node]] | None
) -> nx.DiGraph[Node]:
    """`arg -> user` for every node argument, `dep -> node` for every extra dependency."""
    found: nx.DiGraph[Node] = nx.DiGraph()
    for node in graph.nodes:
        found.add_node(node)
        found.add_edges_from((arg, node) for arg in node.all_input_nodes)
    for node, deps in (extra_deps or {}).items():
        found.add_edges_from((dep, node) for dep in deps)
    return found


def minimal_cycle(graph: nx.DiGraph[Node]) -> list[Node] | None:
    """A short cycle of `graph` (its nodes in order, the first one earliest), or None.
    Acyclic graphs, the common case, are told by a topological sort, linear in the graph;
    networkx's `find_cycle` walks a DAG's edges from every source again."""
    if nx.is_directed_acyclic_graph(graph):
        return None
    try:
        edges = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return None
    best: list[Node] | None = None
    for edge in edges[:MAX_CYCLE_EDGES]:
        u, v = edge[0], edge[1]
        path = nx.shortest_path(graph, v, u)  # v ... u, closed by the edge u -> v
        if best is None or len(path) < len(best):
            best = path
    assert best is not None, "CHK-2: a found cycle has an edge"
    cycle: list[Node] = best
    rank = {node: i for i, node in enumerate(graph.nodes)}
    start = min(range(len(cycle)), key=lambda k: rank[cycle[k]])
    return cycle[start:] + cycle[:start]
