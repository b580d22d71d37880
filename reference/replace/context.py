"""What the refusals torch's pass lacks read besides the region (spec chapter 03): the alias DB
(chapter 09), the pinned global-state switches (RPL-16), the take-overs (RPL-17: a node an
earlier call replaced, and the getitem of that call now in its place), the dead nodes (RPL-27)
and the grad mode at each node (RPL-28). torch keeps none of it: it outlines a region whose
node an earlier call replaced (N11 in `specs/findings.md`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import torch
import torch.fx

from reference.effects.alias_db import AliasDB
from reference.fx_helpers import grad_modes
from reference.replace.dead import dead_nodes
from reference.replace.plan import OutlinePlan, Region
from reference.verdict import HOLDS, Check, Violated

Node = torch.fx.Node
Takeovers = list[tuple[Node, Node]]  # (replaced node, the getitem of the call taking over)


class OutlineContext:
    """What the checks read besides the region: the alias DB (chapter 09), the pinned
    global-state switches (RPL-16), which nodes earlier calls replaced (RPL-17), the dead
    nodes (RPL-27) and the grad mode at each node (RPL-28)."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        db: AliasDB,
        pinned: Iterable[object],
        grouped: Iterable[Node] = (),
    ) -> None:
        self.db = db
        targets = tuple(pinned)
        self.pinned = [n for n in graph.nodes if n.target in targets]
        self.pinned_ranks = [db.rank[n] for n in self.pinned]
        self.replaced_by: dict[Node, Node] = {}
        self.took_over: dict[Node, Node] = {}  # a getitem in a region as now -> the node found
        self.dead = dead_nodes(graph, db, grouped)  # no reason for an output (RPL-27)
        self.grad_on = grad_modes(graph)  # RPL-28

    def pin_between(self, nodes: Iterable[Node]) -> Node | None:
        """A pinned switch strictly inside the span of `nodes`, if any (RPL-16)."""
        ranks = [self.db.rank[n] for n in nodes]
        k = bisect.bisect_right(self.pinned_ranks, min(ranks))
        inside = k < len(self.pinned_ranks) and self.pinned_ranks[k] < max(ranks)
        return self.pinned[k] if inside else None

    def now(self, region: Region) -> list[Node]:
        """`region` as it is now: a node an earlier call replaced (a getitem of a tuple that
        call's region output) is the call's getitem that took over from it (RPL-17)."""
        now = [self.replaced_by.get(n, n) for n in region]
        pairs = zip(region, now, strict=True)
        self.took_over.update((new, old) for old, new in pairs if old is not new)
        return now

    def taken_over(self, region: Region, plan: OutlinePlan) -> Check:
        """RPL-17: the first node of `region` (as found) an earlier call has replaced (and
        erased) that the region's call would compute; a flattened tuple getitem (RPL-4) is only
        an operand, and the getitem that took over from it passes the same value."""
        flat = plan.flattened
        found = (n for p, n in enumerate(region) if p not in flat and n in self.replaced_by)
        gone = next(found, None)
        if gone is None:
            return HOLDS
        by = self.replaced_by[gone].args[0]
        assert isinstance(by, Node), "RPL-12: a take-over getitem reads its call"
        return Violated(f"{gone.name} is now a getitem of {by.name}")

    def replaced(self, erased: list[Node], invoke: Node, takeovers: Takeovers) -> None:
        """A region is now the call `invoke`: each getitem of the call takes over from the node
        it replaces (RPL-17), and the alias DB follows (EFF-7)."""
        for old, new in takeovers:
            self.replaced_by.setdefault(old, new)
        self.db.replaced(erased, invoke, takeovers)

    def names(self, now: Region) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """RPL-17: the names of `now`'s nodes as found, and of those an earlier call took over."""
        took = self.took_over
        taken = tuple(took[n].name for n in now if n in took)
        return tuple(took.get(n, n).name for n in now), taken
