"""What became of each region of a group, as records and as one line per region, for `verify`,
`explain` and the HTML report (spec chapter 03, RPL ids; EXP-12).

Every region of a group gets an outcome, also the regions no rule refused: when the gate vetoes
a group for one region's shapes (RPL-11), when RPL-25 refuses a group for one region's cycle,
or when a rule refuses the whole group (RPL-5, RPL-23), none of its regions is replaced, and
each says so, naming the refusal it shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from reference.replace.outliner import DedupResult, Refused


class Fate(StrEnum):
    REPLACED = "replaced"
    REFUSED = "refused"  # a rule refused this region itself
    WITH_GROUP = "not replaced"  # no rule refused it, but its group is not replaced


@dataclass(frozen=True, slots=True)
class RegionOutcome:
    """Region `region` of group `group`: replaced by the call `invoke` of `subgraph`, refused
    under `rule` (an id such as `RPL-7`, with `reason` and `detail`), or not replaced because
    its group is not: `because` names the region whose refusal stopped the group (None: a
    refusal of the whole group)."""

    group: int
    region: int
    fate: Fate
    invoke: str = ""
    subgraph: str = ""
    rule: str = ""
    reason: str = ""
    detail: str = ""
    because: int | None = None

    def text(self) -> str:
        """`region 2: replaced by invoke_subgraph_2 (subgraph_0)`, `region 1: refused, RPL-7:
        ... (detail)`, `region 0: not replaced, the group is refused for region 3 (RPL-11)`
        (the reason is on region 3's line), `region 0: not replaced, the group is refused:
        RPL-5: ...` (a refusal of the whole group)."""
        return f"region {self.region}: {self.fate}{self.how()}"

    def how(self) -> str:
        """The line after the region and its fate: ` by invoke_subgraph_2 (subgraph_0)`,
        `, RPL-7: ... (detail)`, `, the group is refused ...`."""
        if self.fate is Fate.REPLACED:
            return f" by {self.invoke} ({self.subgraph})"
        detail = f" ({self.detail})" if self.detail else ""
        if self.fate is Fate.REFUSED:
            return f", {self.reason}{detail}"
        if self.because is None:
            return f", the group is refused: {self.reason}{detail}"
        return f", the group is refused for region {self.because} ({self.rule})"

    def to_json(self) -> dict[str, object]:
        return {"region": self.region, "fate": str(self.fate), "invoke": self.invoke,
                "subgraph": self.subgraph, "rule": self.rule, "reason": self.reason,
                "detail": self.detail, "because": self.because}  # fmt: skip


def region_fates(result: DedupResult, group: int, regions: int) -> tuple[RegionOutcome, ...]:
    """The outcome of each of the `regions` regions of `group`, in region order."""
    found: dict[int, RegionOutcome] = {}
    for r in result.replaced:
        if r.group == group:
            found[r.region] = RegionOutcome(group, r.region, Fate.REPLACED, r.invoke, r.subgraph)
    refused = [x for x in result.refused if x.group == group]
    for x in refused:
        if x.region is not None:
            found[x.region] = _refused(x, x.region, Fate.REFUSED)
    stopper = next((x for x in refused if x.region is None or not _replaced_any(result, group)),
                   None)  # fmt: skip
    for k in range(regions):
        if k not in found and stopper is not None:
            found[k] = _refused(stopper, k, Fate.WITH_GROUP)
    return tuple(found[k] for k in sorted(found))


def _replaced_any(result: DedupResult, group: int) -> bool:
    return any(x.group == group for x in result.replaced)


def _refused(x: Refused, k: int, fate: Fate) -> RegionOutcome:
    because = x.region if fate is Fate.WITH_GROUP else None
    return RegionOutcome(x.group, k, fate, rule=x.id, reason=str(x.reason), detail=x.detail,
                         because=because)  # fmt: skip


def region_outcomes(result: DedupResult, group: int, regions: int) -> list[str]:
    """Per region of `group`, in region order, one line: replaced (by which call of which
    subgraph), refused (the invariant that refused it, and why), or not replaced with its
    group (which refusal stopped the group)."""
    return [o.text() for o in region_fates(result, group, regions)]
