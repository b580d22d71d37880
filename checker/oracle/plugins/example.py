"""An implementation under test, written against `checker.oracle.protocol` alone: the example a
newcomer copies (spec chapter 08, DIF-1; course chapter 08, exercise 1).

`Example` implements three components of its own:

- `find_regions`: lock-step region growth over the capture's buckets, in a few dozen lines
  (simpler than fxoracle's: it has no ancestor search, so it checks cycles by a graph walk);
- `deduplicate`: fxoracle's drop-in pass (`reference.dynamo`) run on the graph it is given, the
  way a torch developer would plug a pass with torch's contract into the oracle;
- `stable_sort`: Kahn's algorithm that always places the earliest ready node (a valid order,
  not necessarily torch's: the oracle reports a different valid order as "neither", exit 0).

It does not split: the diff lists `split` as skipped. `Planted` is the same with three planted
bugs (float constants merged, mutation-order dependencies dropped, a sort that ignores extra
dependencies), which the oracle must catch and blame on it:

    fxoracle diff tests/corpus/*.py --against checker.oracle.plugins.example:Example
    fxoracle diff tests/corpus/*.py --against checker.oracle.plugins.example:Planted
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping, Sequence

import torch
import torch.fx

from checker.oracle.protocol import CapturedGraph, DedupOutput, RegionGroups
from reference.dedup import deduplicate, ordering_deps
from reference.dynamo import ModuleOutputGraph, deduplicate_output_graph

Node = torch.fx.Node


class Example:
    """An honest implementation: region finding, deduplication and sorting."""

    def find_regions(self, graph: CapturedGraph) -> RegionGroups:
        buckets = self.buckets(graph)
        order = {n: i for i, n in enumerate(graph.gm.graph.nodes)}
        starts = [b for b in buckets if len(b) > 1]
        starts.sort(key=lambda b: -min(order[n] for n in b))  # latest group first
        claimed: set[Node] = set()
        groups = []
        for bucket in starts:
            regions = grow([n for n in bucket if n not in claimed], self.same(buckets), claimed)
            if len(regions) > 1 and len(regions[0]) > 1:
                ranked = sorted(range(len(regions[0])), key=lambda i: order[regions[0][i]])
                groups.append(tuple(tuple(r[i].name for i in ranked) for r in regions))
        return tuple(groups)

    def buckets(self, graph: CapturedGraph) -> list[tuple[Node, ...]]:
        """The capture's buckets of key-equal nodes (fxoracle's keys)."""
        return list(graph.tracker.buckets().groups)

    def same(self, buckets: Sequence[Sequence[Node]]) -> Mapping[Node, int]:
        return {n: k for k, bucket in enumerate(buckets) for n in bucket}

    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        groups = self.find_regions(graph)
        out = ModuleOutputGraph(graph.gm, graph.tracker)
        result = deduplicate_output_graph(out)
        graph.gm.recompile()
        return DedupOutput(graph.gm, groups, extra_deps=result.extra_deps)

    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        nodes = list(graph.nodes)
        position = {n: i for i, n in enumerate(nodes)}
        waits = {n: {*n.all_input_nodes, *self.deps_of(deps, n)} for n in nodes}
        users: dict[Node, list[Node]] = {n: [] for n in nodes}
        for node, before in waits.items():
            for dep in before:
                users[dep].append(node)
        ready = [position[n] for n in nodes if not waits[n] and n.op != "output"]
        heapq.heapify(ready)
        placed: list[Node] = []
        while ready:
            node = nodes[heapq.heappop(ready)]
            placed.append(node)
            for user in users[node]:
                waits[user].discard(node)
                if not waits[user] and user.op != "output":
                    heapq.heappush(ready, position[user])
        output = nodes[-1]
        for node in placed:
            output.prepend(node)

    def deps_of(self, deps: Mapping[Node, Sequence[Node]], node: Node) -> Sequence[Node]:
        return deps.get(node, ())


def grow(roots: list[Node], same: Mapping[Node, int], claimed: set[Node]) -> list[list[Node]]:
    """Regions grown from `roots` in lock-step: each step takes the next argument of every
    region (breadth first); all join, or none."""
    if len(roots) < 2:
        return []
    regions = [[r] for r in roots]
    queues = [deque(r.all_input_nodes) for r in roots]
    claimed.update(roots)
    while queues and queues[0]:
        candidates = [q.popleft() if q else None for q in queues]
        if joinable(candidates, same, claimed, regions):
            for region, queue, node in zip(regions, queues, candidates, strict=True):
                assert node is not None
                region.append(node)
                queue.extend(node.all_input_nodes)
                claimed.add(node)
    return regions if len(regions[0]) > 1 else []


def joinable(
    candidates: list[Node | None], same: Mapping[Node, int], claimed: set[Node],
    regions: list[list[Node]],
) -> bool:  # fmt: skip
    first = candidates[0]
    if first is None or first.op in ("placeholder", "get_attr"):
        return False
    if any(c is None or c in claimed or same.get(c) != same.get(first) for c in candidates):
        return False
    if len(set(candidates)) < len(candidates):
        return False
    return not any(cycles(region, c) for region, c in zip(regions, candidates, strict=True))


def cycles(region: list[Node], candidate: Node | None) -> bool:
    """Whether contracting the region with `candidate` makes a cycle: some user of the
    candidate outside the region leads back into the region."""
    if candidate is None:
        return True
    inside = {*region, candidate}
    stack = [u for u in candidate.users if u not in inside]
    seen: set[Node] = set()
    while stack:
        node = stack.pop()
        if node in inside:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(node.users)
    return False


class Planted(Example):
    """`Example` with three planted bugs, one per component it implements."""

    def buckets(self, graph: CapturedGraph) -> list[tuple[Node, ...]]:
        """Bug 1: nodes are bucketed by target alone, so calls with different float constants
        merge (torch's B1)."""
        by_target: dict[str, list[Node]] = {}
        for bucket in graph.tracker.buckets().groups:
            for node in bucket:
                by_target.setdefault(f"{node.op}:{node.target}", []).append(node)
        return [tuple(b) for b in by_target.values()]

    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        """Bug 2: the ordering dependencies are built without the tracker's mutations, so after
        the sort an in-place update may no longer come before the reads it must precede (the
        regions themselves are refused as the reference refuses them)."""
        groups = self.find_regions(graph)
        deps = ordering_deps(graph.gm.graph, {})  # no mutated positions: no mutation-order edge
        result = deduplicate(graph.gm, graph.tracker, deps=deps)
        return DedupOutput(graph.gm, groups, extra_deps=result.extra_deps)

    def deps_of(self, deps: Mapping[Node, Sequence[Node]], node: Node) -> Sequence[Node]:
        """Bug 3: the sort ignores every extra dependency."""
        return ()
