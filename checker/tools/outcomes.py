"""What became of each region of a group: one line per region, for `verify` and `explain`
(spec chapter 03, RPL ids)."""

from __future__ import annotations

from reference.outline.outliner import DedupResult


def region_outcomes(result: DedupResult, group: int) -> list[str]:
    """Per region of `group`, in region order: replaced (by which call of which subgraph) or
    refused (the invariant that refused it, and why); a whole-group refusal says so."""
    found = [(x.region, f"region {x.region}: replaced by {x.invoke} ({x.subgraph})")
             for x in result.replaced if x.group == group]  # fmt: skip
    for x in result.refused:
        if x.group == group:
            where = "all regions" if x.region is None else f"region {x.region}"
            detail = f" ({x.detail})" if x.detail else ""
            found.append((x.region or 0, f"{where}: refused, {x.reason}{detail}"))
    return [text for _, text in sorted(found)]
