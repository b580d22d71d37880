"""The example plug-in's region finder: regions grown in lock-step over buckets of key-equal
nodes (spec chapter 02's algorithm in a few dozen lines, without its ancestor search: cycles are
checked by a walk over the candidate's users)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

import torch.fx

Node = torch.fx.Node
Region = list[Node]


def grow(roots: list[Node], same: Mapping[Node, int], claimed: set[Node]) -> list[Region]:
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
    regions: list[Region],
) -> bool:  # fmt: skip
    first = candidates[0]
    if first is None or first.op in ("placeholder", "get_attr"):
        return False
    if any(c is None or c in claimed or same.get(c) != same.get(first) for c in candidates):
        return False
    if len(set(candidates)) < len(candidates):
        return False
    return not any(grows_a_cycle(region, c) for region, c in zip(regions, candidates, strict=True))


def grows_a_cycle(region: Region, candidate: Node | None) -> bool:
    """Whether some user of `candidate` outside the region leads back into the region."""
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
