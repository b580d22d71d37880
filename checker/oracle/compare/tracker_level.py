"""The tracker component compared on one capture (spec chapter 08, DIF-4, DIF-25): region
groups by node names; a group is wrong if it overlaps or pairs unequal nodes
(`checker.oracle.compare.faults.region_faults`); two valid groupings are a free choice, with
the groups one side lacks and, when the other's key merges unequal nodes, the first pair."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.fx

from checker.oracle.compare.divergence import (
    Blame,
    Blamed,
    Divergence,
    Evidence,
    Kind,
    broke,
    crashed,
    divergence,
)
from checker.oracle.compare.faults import bucket_faults, region_faults
from checker.oracle.compare.judge import Failure, Judgement, attempt, blame, free_choice
from checker.oracle.compare.model_level import Subject
from checker.oracle.protocol import FindsRegions, RegionGroups
from checker.oracle.sides.contract import ContractError, region_groups
from checker.oracle.sides.sides import Component, Sides


def compare_tracker(subject: Subject, sides: Sides) -> list[Divergence]:
    """Region groups by node names; faults decide who is wrong (DIF-4); a name that is no node
    of the graph breaks the contract (DIF-12)."""
    reference = subject.ours
    ours = (
        sides.reference.find_regions(subject.graph.copy())
        if isinstance(reference, Failure)
        else reference.groups
    )
    other = sides.other
    assert isinstance(other, FindsRegions), "DIF-1: the part is implemented"
    found = attempt(lambda: other.find_regions(subject.graph.copy()))
    if isinstance(found, Failure):
        return [crashed(sides, Component.TRACKER, found.error)]
    theirs = attempt(lambda: region_groups(found, subject.graph.gm.graph))
    if isinstance(theirs, Failure):
        assert isinstance(theirs.error, ContractError), theirs.error
        return [broke(sides, Component.TRACKER, theirs.error)]
    if ours == theirs:
        return []
    base = subject.graph.gm
    judged = [_judged_groups(base, g) for g in (ours, theirs)]
    sizes = f"reference {_shape(ours)}, {sides.label} {_shape(theirs)}"
    blamed = blame(judged[0], judged[1], sides.label, sizes)
    if blamed.blame is Blame.NEITHER:
        blamed = _both_valid(subject, (ours, theirs), sides.label, sizes)
    return [divergence(sides, Component.TRACKER, Kind.REGIONS, blamed)]


def _both_valid(
    subject: Subject, groups: tuple[RegionGroups, RegionGroups], label: str, sizes: str
) -> Blamed:
    """Two valid groupings: which groups one side has that the other lacks, and, when the
    other's key merges unequal nodes, the first pair it merges (TRK-5) (DIF-25)."""
    why = f"{group_difference(*groups, label)}; {VALID_GROUPS}"
    merged = bucket_faults(subject.graph.gm, _their_buckets(subject))
    if not merged:
        return free_choice(sizes, why)
    why += f"; {label}'s key merges unequal nodes (TRK-5): {merged[0]}"
    return free_choice(sizes, why, Evidence(fault=merged[0]))


VALID_GROUPS = "both groupings are valid: no overlap, equal nodes at each position"


def group_difference(ours: RegionGroups, theirs: RegionGroups, label: str) -> str:
    """The groups one side found and the other did not, each as `regions x nodes at` the first
    node of each region."""
    only_ours = [g for g in ours if g not in theirs]
    only_theirs = [g for g in theirs if g not in ours]
    if not only_ours and not only_theirs:
        return "the same groups in another order"
    if not only_theirs:
        return f"{label} found fewer groups: it lacks {_groups(only_ours)}"
    if not only_ours:
        return f"{label} found more groups: {_groups(only_theirs)}"
    return f"the reference alone found {_groups(only_ours)}; {label} alone {_groups(only_theirs)}"


def _groups(groups: Sequence[Sequence[Sequence[str]]], most: int = 3) -> str:
    shown = [f"{len(g)}x{len(g[0])} at {'/'.join(r[0] for r in g)}" for g in groups[:most] if g]
    more = f" and {len(groups) - most} more" if len(groups) > most else ""
    return ", ".join(shown) + more


def _judged_groups(base: torch.fx.GraphModule, groups: RegionGroups) -> Judgement:
    """Wrong with the first fault of `groups` (DIF-4), or right."""
    fault = next(iter(region_faults(base, groups)), None)
    return Judgement.of_fault(fault, Evidence(fault=fault))


def _their_buckets(subject: Subject) -> tuple[tuple[str, ...], ...]:
    theirs = subject.theirs
    return () if isinstance(theirs, Failure) else tuple(theirs.buckets)


def _shape(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    return "[" + ", ".join(f"{len(g)}x{len(g[0])}" for g in groups if g) + "]"
