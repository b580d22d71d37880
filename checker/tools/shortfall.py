"""Why a model has no region group, or fewer than a reader expects (spec chapter 02, EXP-14):
the buckets that started a group the expansion dropped, with every step and its refusal, and
the nodes that keyed apart though they run the same op and target, with the key field that
tells them apart. `fxoracle explain` prints both; it decides nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch.fx

from checker.io.reports import plural
from checker.tools.refusals import StepContext, StepLine, sorted_differences, step_lines, top_field
from reference.expand.lockstep import GroupExpansion
from reference.expand.regions import RegionSearch
from reference.fx_helpers import NodeIndex
from reference.track.keys import NodeKey

Keys = Mapping[torch.fx.Node, NodeKey]
Owners = Mapping[NodeIndex, str]  # node -> "group g region k", for the kept groups so far


@dataclass(frozen=True, slots=True)
class DroppedGroup:
    """A bucket of key-equal nodes whose group the expansion dropped (EXP-1): `members` in
    graph order, those already in a region of an earlier group with their owner (EXP-4), why
    it was dropped, and every step it took."""

    members: tuple[str, ...]
    claimed: tuple[str, ...]
    why: str
    steps: tuple[StepLine, ...]

    @property
    def lost(self) -> bool:
        """Some member is in no region: dropping the group lost a candidate."""
        return len(self.claimed) < len(self.members)

    def to_json(self) -> dict[str, object]:
        return {"members": list(self.members), "claimed": list(self.claimed), "why": self.why,
                "steps": [s.to_json() for s in self.steps]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class KeyedApart:
    """Nodes with one op and target in different buckets (one per bucket, graph order), and
    the first key field that tells the first two apart, with both values."""

    nodes: tuple[str, ...]
    path: str
    first: str
    second: str
    field: str  # the key's own field the path is in (`args`, `call_site`, ...)

    def text(self) -> str:
        a, b = self.nodes[:2]
        return (f"keyed apart: {', '.join(self.nodes)} (key field {self.path}: "
                f"{a} has {self.first}, {b} has {self.second})")  # fmt: skip

    def to_json(self) -> dict[str, object]:
        return {"nodes": list(self.nodes), "field": self.path, "first": self.first,
                "second": self.second}  # fmt: skip


def claimed_roots(search: RegionSearch, g: GroupExpansion, owners: Owners) -> tuple[str, ...]:
    """The group's members already in a region of an earlier group, each with its owner:
    `mul_1 (group 0 region 2)` (EXP-4)."""
    return tuple(f"{search.view.names[c]} ({owners.get(c, 'an earlier group')})"
                 for c in g.claimed_roots)  # fmt: skip


def dropped_group(
    search: RegionSearch, keys: Keys, g: GroupExpansion, owners: Owners
) -> DroppedGroup:
    """What the expansion did with a group it dropped, and why in one phrase."""
    view = search.view
    members = tuple(view.names[m] for m in sorted(view.buckets[g.bucket]))
    claimed = claimed_roots(search, g, owners)
    regions = [[r[-1]] for r in g.regions]
    ctx = StepContext(view, search.nodes, keys, regions, owners)
    steps = step_lines(ctx, g.steps)
    if len(g.regions) < 2:
        left = plural(len(g.regions), "member")
        why = f"EXP-4: {left} not already in a region of an earlier group, and a group needs 2"
    else:
        why = "EXP-1: no step joined, so every region stays a single node"
    return DroppedGroup(members, claimed, why, steps)


def keyed_apart(search: RegionSearch, keys: Keys, call_sites: bool) -> tuple[KeyedApart, ...]:
    """Per op and target run by nodes of two or more buckets: one node per bucket and the
    first key field telling the first two apart. Only families whose keys differ in one
    top-level field (a near miss: the shapes, a constant, the grad mode) are listed; the call
    site only with `call_sites` (two lines of code are meant to differ, unless the model has
    no group at all and the reader asks why)."""
    families: dict[tuple[str, str], list[NodeKey]] = {}
    names: dict[tuple[str, str], list[str]] = {}
    for first in sorted(min(bucket) for bucket in search.view.buckets):
        key = keys.get(search.nodes[first])
        if key is not None and key.op in ("call_function", "call_method", "call_module"):
            families.setdefault((key.op, key.target), []).append(key)
            names.setdefault((key.op, key.target), []).append(search.view.names[first])
    found = [_apart(names[f], ks) for f, ks in families.items() if len(ks) > 1]
    return tuple(x for x in found if x is not None and (call_sites or x.field != "call_site"))


def _apart(names: Sequence[str], keys: Sequence[NodeKey]) -> KeyedApart | None:
    found = sorted_differences(keys[0], keys[1])
    if not found or len({top_field(d[0]) for d in found}) > 1:
        return None
    path, mine, theirs = found[0]
    return KeyedApart(tuple(names), path, repr(mine), repr(theirs), top_field(path))
