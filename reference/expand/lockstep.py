"""Region expansion: grow identical regions in lock-step into region groups (spec chapter 02, EXP).

The expansion works on a `GraphView`: nodes by position in graph order (`NodeIndex`, which is
also the topological rank), their unique node arguments, their users, their op, the buckets of
key-equal nodes and the bucket each node counts as while regions grow. Nothing here holds an
`fx.Node`, so the algorithm can be unit- and property-tested on hand-made views (`make_view`)
without tracing a model; `reference.expand.regions` builds the view of an fx graph.

Each bucket of key-equal nodes starts as a group of single-node regions. Groups are expanded
latest first (EXP-2). A step pops one candidate from every region's backward BFS queue; the
candidates join every region or none (EXP-3). A candidate is refused when it is claimed by a region
already (EXP-4), is shared with another region (EXP-7), is a placeholder or get_attr (EXP-5), has
a different key (EXP-6), or would make contracting its region create a cycle (EXP-8).

The cycle test asks "is this user an ancestor of the region's root?": each region keeps its
root's ancestors (`ancestors`, one set per region where torch keeps one per node). With
`fast=True` a lazy search answers the same question (`reference.fast.expand`, EXP-11).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NewType, cast

from reference.errors import FxOracleError
from reference.fast.expand import AncestorSearch
from reference.fx_helpers import NodeIndex

BucketId = NewType("BucketId", int)
Args = tuple[tuple[NodeIndex, ...], ...]  # per node: positions (its arguments, its users)
BucketOf = tuple[BucketId | None, ...]  # per node: the bucket it counts as, None for none


@dataclass(frozen=True, slots=True)
class GraphView:
    """A graph as positions: `args[i]` are node i's unique node arguments in `all_input_nodes`
    order (the order the backward BFS queues them); `buckets[b]` the members of bucket b;
    `bucket_of[i]` the bucket node i counts as (None: it is identical to no other node, TRK-12)."""

    names: tuple[str, ...]
    ops: tuple[str, ...]
    args: tuple[tuple[NodeIndex, ...], ...]
    users: tuple[tuple[NodeIndex, ...], ...]
    buckets: tuple[tuple[NodeIndex, ...], ...]
    bucket_of: tuple[BucketId | None, ...]

    def __len__(self) -> int:
        return len(self.names)


def make_view(
    names: tuple[str, ...],
    ops: tuple[str, ...],
    args: tuple[tuple[NodeIndex, ...], ...],
    buckets: tuple[tuple[NodeIndex, ...], ...],
    same: Mapping[NodeIndex, BucketId] | None = None,
) -> GraphView:
    """Build a view from arguments and buckets, deriving the users and `bucket_of`.

    `same`, when given, is the bucket each node counts as while regions grow (a node missing
    from it is identical to no other, TRK-12); by default a node counts as its bucket's.
    Raises `FxOracleError` when an argument does not precede its user (the graph is not in
    topological order, so positions are not ranks).
    """
    if same is None:
        same = {m: BucketId(b) for b, members in enumerate(buckets) for m in members}
    positions = cast("list[NodeIndex]", list(range(len(names))))
    users: list[list[NodeIndex]] = [[] for _ in names]
    for i, node_args in zip(positions, args, strict=True):
        for a in node_args:
            if a >= i:
                raise FxOracleError(
                    f"graph is not topologically sorted: {names[i]} uses {names[a]}, "
                    "which comes after it"
                )
            users[a].append(i)
    bucket_of = tuple(map(same.get, positions))
    return GraphView(names, ops, args, tuple(map(tuple, users)), buckets, bucket_of)


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


def ancestors(args: Sequence[Sequence[int]], root: int) -> set[int]:
    """Every node `root` depends on through arguments (`args[i]`: node i's), EXP-8, EXP-12."""
    found: set[int] = set()
    stack = [root]
    while stack:
        for a in args[stack.pop()]:
            if a not in found:
                found.add(a)
                stack.append(a)
    return found


class RegionGrowth:
    """One region while it grows: its nodes, its BFS queue and its root's ancestors."""

    def __init__(self, view: GraphView, root: NodeIndex, root_ancestors: Container[int]) -> None:
        self.view = view
        self.nodes: list[NodeIndex] = [root]
        self.members: set[NodeIndex] = {root}
        self.queue: deque[NodeIndex] = deque(view.args[root])
        self.ancestors = root_ancestors

    def creates_cycle(self, n: NodeIndex) -> bool:
        """EXP-8: a user of `n` outside the region leads back to the region's root."""
        members, ancestors = self.members, self.ancestors
        for u in self.view.users[n]:  # noqa: SIM110 (a loop: this runs once per region per step)
            if u not in members and u in ancestors:
                return True
        return False

    def refusal(
        self,
        c: NodeIndex | None,
        c0: NodeIndex,
        seen: set[NodeIndex | None],
        claimed: set[NodeIndex],
    ) -> StepRefusal | None:
        """Why candidate `c` may not join (EXP-3..EXP-8), `c0` being region 0's; None: it may."""
        if c is None:
            return StepRefusal.EXHAUSTED
        if c in self.members:
            return StepRefusal.REVISIT
        if c in claimed:
            return StepRefusal.CLAIMED
        if c in seen:
            return StepRefusal.SHARED
        if self.view.ops[c] in ("placeholder", "get_attr"):
            return StepRefusal.INPUT
        if self.view.bucket_of[c] is None or self.view.bucket_of[c] != self.view.bucket_of[c0]:
            return StepRefusal.DIFFERENT
        if self.creates_cycle(c):
            return StepRefusal.CYCLE
        return None

    def add(self, n: NodeIndex) -> None:
        self.nodes.append(n)
        self.members.add(n)
        self.queue.extend(self.view.args[n])


def expand(view: GraphView, *, fast: bool = False) -> Expansion:
    """Expand every bucket with two or more members, latest group first (EXP-1, EXP-2).

    `fast=True` answers the cycle test with `reference.fast.expand.AncestorSearch` (EXP-11): the
    same expansion, step for step, faster on large graphs.
    """
    find_ancestors = AncestorSearch if fast else ancestors
    claimed: set[NodeIndex] = set()
    groups = (_expand_group(view, b, claimed, find_ancestors) for b in group_order(view))
    return Expansion(tuple(groups))


def group_order(view: GraphView) -> list[BucketId]:
    """EXP-2: buckets with two or more members, by descending rank of their earliest member."""
    multi = [BucketId(b) for b, members in enumerate(view.buckets) if len(members) > 1]
    return sorted(multi, key=lambda b: -min(view.buckets[b]))


def _expand_group(
    view: GraphView,
    bucket: BucketId,
    claimed: set[NodeIndex],
    find_ancestors: Callable[[Sequence[Sequence[int]], int], Container[int]],
) -> GroupExpansion:
    members = view.buckets[bucket]
    roots = [m for m in members if m not in claimed]
    taken = tuple(m for m in members if m in claimed)
    if len(roots) < 2:
        return GroupExpansion(bucket, taken, tuple((r,) for r in roots), ())
    claimed.update(roots)  # EXP-4: a root cannot join another region of its own group
    growths = [RegionGrowth(view, r, find_ancestors(view.args, r)) for r in roots]
    steps: list[Step] = []
    while growths[0].queue:
        candidates = tuple([g.queue.popleft() if g.queue else None for g in growths])
        refused = _first_refusal(growths, candidates, claimed)
        if refused is None:
            present = cast("tuple[NodeIndex, ...]", candidates)  # EXP-3: none is missing
            for g, c in zip(growths, present, strict=True):
                g.add(c)
            claimed.update(present)
        steps.append(Step(candidates, *(refused or (None, None))))
    regions = _in_reference_order([g.nodes for g in growths])
    if len(regions[0]) == 1:
        claimed.difference_update(roots)  # a dropped group claims nothing
    return GroupExpansion(bucket, taken, regions, tuple(steps))


def _first_refusal(
    growths: list[RegionGrowth], candidates: tuple[NodeIndex | None, ...], claimed: set[NodeIndex]
) -> tuple[int, StepRefusal] | None:
    """The first region whose candidate is refused, and why; None when all may join. Region
    0's cycle test comes first, as in torch: its candidate drives the step."""
    c0 = candidates[0]
    assert c0 is not None, "EXP-3: region 0 drives the steps"
    if growths[0].creates_cycle(c0):
        return 0, StepRefusal.CYCLE
    seen: set[NodeIndex | None] = set()
    for k, (growth, c) in enumerate(zip(growths, candidates, strict=True)):
        reason = growth.refusal(c, c0, seen, claimed)
        if reason is not None:
            return k, reason
        seen.add(c)
    return None


def _in_reference_order(regions: list[list[NodeIndex]]) -> tuple[tuple[NodeIndex, ...], ...]:
    """EXP-9: positions permuted so that region 0 is in topological (graph) order."""
    reversed_regions = [r[::-1] for r in regions]
    order = sorted(range(len(reversed_regions[0])), key=lambda i: reversed_regions[0][i])
    return tuple(tuple(r[i] for i in order) for r in reversed_regions)
