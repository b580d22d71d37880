"""The example plug-in's outlining (spec chapter 11): what a region reads and returns, whether
contracting a group's regions closes a cycle, the subgraph copied from region 0 and the call
that replaces each region. Written against torch.fx alone, like `example.py`."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import torch
import torch.fx

from checker.oracle.plugins.regions import Region

Node = torch.fx.Node
Deps = dict[Node, dict[Node, None]]  # node -> the nodes it must follow (dicts as ordered sets)
INVOKE = torch.ops.higher_order.invoke_subgraph


def wiring(region: Region) -> list[list[int | None]]:
    """Per node, per argument: the region position it comes from, or None (outside)."""
    position = {n: i for i, n in enumerate(region)}
    return [[position.get(a) for a in _args(n)] for n in region]


def usages(region: Region) -> list[int]:
    """Per outside usage (node, argument), the index of its operand: equal lists mean the
    same pattern of shared inputs."""
    found = operands(region)
    inside = set(region)
    return [found.index(a) for n in region for a in _args(n) if a not in inside]


def operands(region: Region) -> list[Node]:
    """The distinct outside inputs of a region, in first-use order."""
    inside = set(region)
    return list(dict.fromkeys(a for n in region for a in _args(n) if a not in inside))


def outputs_of(region: Region) -> list[int]:
    """The positions of the region whose value an outside node uses."""
    inside = set(region)
    return [p for p, n in enumerate(region) if any(u not in inside for u in n.users)]


def _args(node: Node) -> list[Node]:
    found: list[Node] = []
    torch.fx.map_arg((node.args, node.kwargs), found.append)
    return found


def closes_cycle(regions: Sequence[Region], deps: Deps) -> bool:
    """Whether contracting each region to one node makes the graph (data and `deps`) cyclic:
    a topological sort of the contracted graph fails."""
    owner = {n: k for k, r in enumerate(regions) for n in r}
    label = {n: ("region", owner[n]) if n in owner else ("node", n.name) for n in deps}
    edges: dict[object, set[object]] = {v: set() for v in label.values()}
    for node in deps:
        for before in (*node.all_input_nodes, *deps[node]):
            if label[before] != label[node]:
                edges[label[node]].add(label[before])
    indegree = {v: len(e) for v, e in edges.items()}
    users: dict[object, list[object]] = {v: [] for v in edges}
    for v, befores in edges.items():
        for b in befores:
            users[b].append(v)
    ready = [v for v, d in indegree.items() if d == 0]
    while ready:
        for u in users[ready.pop()]:
            indegree[u] -= 1
            if indegree[u] == 0:
                ready.append(u)
    return any(indegree.values())


def install(
    gm: torch.fx.GraphModule, region0: Region, outputs: Sequence[int], deps: Deps
) -> tuple[Node, str]:
    """Copy region 0 into a new subgraph module on `gm` (a placeholder per operand, the
    `outputs` positions returned as a tuple; nodes carry `val`, which torch's runtime reads)
    and fetch it with a `get_attr` at the top of the graph."""
    body = torch.fx.Graph()
    copies: dict[Node, Node] = {}
    for k, operand in enumerate(operands(region0)):
        copies[operand] = body.placeholder(f"input_{k}")
        copies[operand].meta["example_value"] = operand.meta["example_value"]
    for node in region0:
        copies[node] = body.node_copy(node, lambda a: copies[a])
        copies[node].meta["val"] = node.meta["example_value"]
    body.output(tuple(copies[region0[p]] for p in outputs))
    taken = dict(gm.named_children())
    name = next(f"subgraph_{i}" for i in range(len(taken) + 1) if f"subgraph_{i}" not in taken)
    gm.register_module(name, torch.fx.GraphModule(gm, body))
    with gm.graph.inserting_before(next(iter(gm.graph.nodes))):
        fetch = gm.graph.get_attr(name)
    deps[fetch] = {}
    return fetch, name


def replace(
    graph: torch.fx.Graph, region: Region, subgraph: tuple[Node, str], outputs: Sequence[int],
    deps: Deps,
) -> None:  # fmt: skip
    """The region becomes `invoke_subgraph(subgraph, name, *operands)`; a getitem per output
    takes over its outside uses; the region's ordering deps move onto the call."""
    fetch, name = subgraph
    call = graph.call_function(INVOKE, (fetch, name, *operands(region)))
    deps[call] = {}
    for k, p in enumerate(outputs):
        item = graph.call_function(operator.getitem, (call, k))
        region[p].replace_all_uses_with(item, propagate_meta=True)
        deps[item] = {}
    inside = set(region)
    for node in reversed(region):
        deps[call].update((d, None) for d in deps.pop(node) if d not in inside)
        graph.erase_node(node)
    for own in deps.values():
        for node in [d for d in own if d in inside]:
            del own[node]
            own[call] = None
