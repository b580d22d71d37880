"""Region expansion: grow identical regions in lock-step into region groups (spec chapter 02, EXP).

Each bucket of key-equal nodes starts as a group of single-node regions. Groups are expanded
latest first (EXP-2). A step pops one candidate from every region's backward BFS queue; the
candidates join every region or none (EXP-3). A candidate is refused when it is claimed by a region
already (EXP-4), is shared with another region (EXP-7), is a placeholder or get_attr (EXP-5), has
a different key (EXP-6), or would make contracting its region create a cycle (EXP-8).

The cycle test needs "is u an ancestor of the region's root?". torch keeps a full ancestor
set per node (quadratic). Here each region owns an `AncestorSearch`: a backward search from the
root that visits nodes in decreasing topological rank and stops at the rank asked about, so the
cost is the part of the root's ancestor cone that the region actually reaches (EXP-11).
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from typing import cast

from reference.expand.graph_view import BucketId, GraphView
from reference.fx_helpers import NodeIndex


class StepRefusal(StrEnum):
    """Why a step's candidates did not join (each names the invariant that refuses them)."""

    EXHAUSTED = "EXP-3: a region's queue is empty"
    REVISIT = "EXP-4: the candidate is already in this region"
    CLAIMED = "EXP-4: the candidate already belongs to a region"
    SHARED = "EXP-7: the candidate is shared with another region of the group"
    INPUT = "EXP-5: placeholders and get_attr never join a region"
    DIFFERENT = "EXP-6: the candidate's key differs from the representative's"
    CYCLE = "EXP-8: replacing the region would create a cycle"


@dataclass(frozen=True, slots=True)
class Step:
    """One lock-step: a candidate per region (None: queue empty), and the verdict."""

    candidates: tuple[NodeIndex | None, ...]
    refused_region: int | None
    reason: StepRefusal | None

    @property
    def accepted(self) -> bool:
        return self.reason is None


@dataclass(frozen=True, slots=True)
class GroupExpansion:
    """The expansion of one bucket: its regions (final order) and every step taken."""

    bucket: BucketId
    claimed_roots: tuple[NodeIndex, ...]
    regions: tuple[tuple[NodeIndex, ...], ...]
    steps: tuple[Step, ...]

    @property
    def kept(self) -> bool:
        """EXP-1: a group is reported only when its regions have more than one node."""
        return len(self.regions) > 1 and len(self.regions[0]) > 1


@dataclass(frozen=True, slots=True)
class Expansion:
    """All groups in processing order (EXP-2), kept or not."""

    groups: tuple[GroupExpansion, ...]

    def kept_regions(self) -> list[tuple[tuple[NodeIndex, ...], ...]]:
        return [g.regions for g in self.groups if g.kept]


class AncestorSearch:
    """Answers "is u an ancestor of root?" lazily, in decreasing rank (EXP-11)."""

    def __init__(self, view: GraphView, root: NodeIndex) -> None:
        self._view = view
        self._root = root
        self._found: set[NodeIndex] = set()
        self._frontier: list[int] = [-root]  # max-heap of found, unexpanded nodes

    def is_ancestor(self, u: NodeIndex) -> bool:
        if u >= self._root:
            return False
        while self._frontier and -self._frontier[0] > u:
            v = NodeIndex(-heapq.heappop(self._frontier))
            for a in self._view.args[v]:
                if a not in self._found:
                    self._found.add(a)
                    heapq.heappush(self._frontier, -a)
        return u in self._found


class RegionGrowth:
    """One region while it grows: its nodes, its BFS queue and its ancestor search."""

    def __init__(self, view: GraphView, root: NodeIndex) -> None:
        self.view = view
        self.nodes: list[NodeIndex] = [root]
        self.members: set[NodeIndex] = {root}
        self.queue: deque[NodeIndex] = deque(view.args[root])
        self.ancestors = AncestorSearch(view, root)

    def creates_cycle(self, n: NodeIndex) -> bool:
        """EXP-8: n's users outside the region must not lead back into it."""
        members, ancestors = self.members, self.ancestors
        for u in self.view.users[n]:  # noqa: SIM110 (no generator on the hot path)
            if u not in members and ancestors.is_ancestor(u):
                return True
        return False

    def add(self, n: NodeIndex) -> None:
        self.nodes.append(n)
        self.members.add(n)
        self.queue.extend(self.view.args[n])


def expand(view: GraphView) -> Expansion:
    """Expand every bucket with two or more members, latest group first (EXP-1, EXP-2)."""
    claimed: set[NodeIndex] = set()
    return Expansion(tuple(_expand_group(view, b, claimed) for b in group_order(view)))


def group_order(view: GraphView) -> list[BucketId]:
    """EXP-2: buckets with two or more members, by descending rank of their earliest member."""
    multi = [BucketId(b) for b, members in enumerate(view.buckets) if len(members) > 1]
    return sorted(multi, key=lambda b: -min(view.buckets[b]))


def _expand_group(view: GraphView, bucket: BucketId, claimed: set[NodeIndex]) -> GroupExpansion:
    members = view.buckets[bucket]
    roots = [m for m in members if m not in claimed]
    taken = tuple(m for m in members if m in claimed)
    if len(roots) < 2:
        return GroupExpansion(bucket, taken, tuple((r,) for r in roots), ())
    claimed.update(roots)  # EXP-4: a root cannot join another region of its own group
    growths = [RegionGrowth(view, r) for r in roots]
    steps: list[Step] = []
    queues = [g.queue for g in growths]
    while queues[0]:
        candidates = tuple([q.popleft() if q else None for q in queues])
        refused = _first_refusal(view, growths, candidates, claimed)
        if refused is None:
            assert None not in candidates, "EXP-3: an accepted step has a candidate per region"
            present = cast("tuple[NodeIndex, ...]", candidates)
            for g, c in zip(growths, present, strict=True):
                g.add(c)
            claimed.update(present)
        steps.append(Step(candidates, *(refused or (None, None))))
    regions = _in_reference_order([g.nodes for g in growths])
    if len(regions[0]) == 1:
        claimed.difference_update(roots)  # a dropped group claims nothing
    return GroupExpansion(bucket, taken, regions, tuple(steps))


def _first_refusal(
    view: GraphView,
    growths: list[RegionGrowth],
    candidates: tuple[NodeIndex | None, ...],
    claimed: set[NodeIndex],
) -> tuple[int, StepRefusal] | None:
    """The first region whose candidate is refused, and why; None when all may join. Region
    0's cycle test comes first: its candidate drives the step."""
    c0 = candidates[0]
    assert c0 is not None, "EXP-3: region 0 drives the steps"
    if growths[0].creates_cycle(c0):
        return 0, StepRefusal.CYCLE
    seen: set[NodeIndex] = set()
    for k, c in enumerate(candidates):
        reason = _refusal(view, growths[k], c, c0, k, seen, claimed)
        if reason is not None:
            return k, reason
        assert c is not None
        seen.add(c)
    return None


_INPUT_OPS = frozenset({"placeholder", "get_attr"})


def _refusal(
    view: GraphView,
    growth: RegionGrowth,
    c: NodeIndex | None,
    c0: NodeIndex,
    k: int,
    seen: set[NodeIndex],
    claimed: set[NodeIndex],
) -> StepRefusal | None:
    if c is None:
        return StepRefusal.EXHAUSTED
    if c in growth.members:
        return StepRefusal.REVISIT
    if c in claimed:
        return StepRefusal.CLAIMED
    if c in seen:
        return StepRefusal.SHARED
    if view.ops[c] in _INPUT_OPS:
        return StepRefusal.INPUT
    if view.bucket[c] is None or view.bucket[c] != view.bucket[c0]:
        return StepRefusal.DIFFERENT
    if k > 0 and growth.creates_cycle(c):
        return StepRefusal.CYCLE
    return None


def _in_reference_order(regions: list[list[NodeIndex]]) -> tuple[tuple[NodeIndex, ...], ...]:
    """EXP-9: positions permuted so that region 0 is in topological (graph) order."""
    reversed_regions = [r[::-1] for r in regions]
    order = sorted(range(len(reversed_regions[0])), key=lambda i: reversed_regions[0][i])
    return tuple(tuple(r[i] for i in order) for r in reversed_regions)
