"""The model-level components, tracker and dedup, compared on one capture (spec chapter 08,
DIF-3, DIF-4).

`Subject` runs each side's deduplication of the captured graph once, on its own copy, and judges
it when a comparison needs it. The tracker's region groups are compared by node names; a group
is wrong if it overlaps or pairs unequal nodes (`checker.oracle.compare.faults.region_faults`).
The graphs after the pass are compared by meaning and judged by execution and the checker
(`checker.oracle.compare.judge`); graphs that mean the same still each run against the original.
A side that raises is judged wrong, never an exception of the diff; both sides are judged even
when one of them raised, so "both wrong" is a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace
from functools import cached_property, partial

import torch.fx

from checker.oracle.compare.canon import (
    CanonGraph,
    canonical_graph,
    first_difference,
    only_order_differs,
)
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
from checker.oracle.compare.judge import (
    RIGHT,
    Failure,
    Judgement,
    attempt,
    blame,
    compare_runs,
    judge_transformation,
)
from checker.oracle.compare.meaning import same_output
from checker.oracle.protocol import (
    Deduplicates,
    DedupOutput,
    FindsRegions,
    RegionGroups,
)
from checker.oracle.sides.contract import ContractError, dedup_output, region_groups
from checker.oracle.sides.impls import ReferenceOutput
from checker.oracle.sides.sides import Component, Sides
from reference.dynamo.capture import Capture
from reference.policy import fewest_torch_rules


class Subject:
    """One captured graph under diff, and each side's deduplication of it (run once, lazily,
    on its own copy)."""

    def __init__(self, graph: Capture, sides: Sides) -> None:
        self.graph, self.sides = graph, sides

    @cached_property
    def ours(self) -> ReferenceOutput | Failure:
        """The reference's output; its crash is judged like any side's (DIF-4)."""
        return attempt(lambda: self.sides.reference.deduplicate(self.graph.copy()))

    @cached_property
    def judged_ours(self) -> Judgement:
        """The reference's output judged on its own (DIF-4), when a comparison needs it."""
        graph, ours = self.graph, self.ours
        if isinstance(ours, Failure):
            return Judgement.of_failure(ours)
        return judge_transformation(graph.gm, ours.transformed, graph.example_inputs,
                                    ours.extra_deps)  # fmt: skip

    @cached_property
    def theirs(self) -> DedupOutput | Failure:
        """The other side's output, held to the contract (a `ContractError` is the plug-in's
        fault, reported as such: DIF-12)."""
        other = self.sides.other
        if not isinstance(other, Deduplicates):
            return Failure(NotImplementedError("no deduplicate"))
        found = attempt(lambda: other.deduplicate(self.graph.copy()))
        if isinstance(found, Failure):
            return found
        return attempt(lambda: dedup_output(found))

    def judged_theirs(self, theirs: DedupOutput | Failure) -> Judgement:
        """The other side's output judged on its own (DIF-4)."""
        if isinstance(theirs, Failure):
            return Judgement.of_failure(theirs)
        graph = self.graph
        return judge_transformation(graph.gm, theirs.transformed, graph.example_inputs,
                                    theirs.extra_deps)  # fmt: skip


def compare_tracker(subject: Subject, sides: Sides) -> list[Divergence]:
    """Region groups by node names; faults decide who is wrong (DIF-4)."""
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
    theirs = attempt(lambda: region_groups(found))
    if isinstance(theirs, Failure):
        assert isinstance(theirs.error, ContractError), theirs.error
        return [broke(sides, Component.TRACKER, theirs.error)]
    if ours == theirs:
        return []
    base = subject.graph.gm
    judged = [_judged_groups(base, g) for g in (ours, theirs)]
    sizes = f"reference {_shape(ours)}, {sides.label} {_shape(theirs)}"
    if judged[0].right and judged[1].right:  # both valid: is the difference the other's key's?
        merged = bucket_faults(base, _their_buckets(subject))
        if merged:
            detail = f"{sizes}; both valid, {sides.label}'s key merges unequal nodes (TRK-5): "
            why = Blamed(Blame.NEITHER, f"{detail}{merged[0]}", Evidence(fault=merged[0]))
            return [divergence(sides, Component.TRACKER, Kind.REGIONS, why)]
    blamed = blame(judged[0], judged[1], sides.label, sizes)
    return [divergence(sides, Component.TRACKER, Kind.REGIONS, blamed)]


def _judged_groups(base: torch.fx.GraphModule, groups: RegionGroups) -> Judgement:
    """Wrong with the first fault of `groups` (DIF-4), or right."""
    fault = next(iter(region_faults(base, groups)), None)
    return Judgement.of_fault(fault, Evidence(fault=fault))


def _their_buckets(subject: Subject) -> tuple[tuple[str, ...], ...]:
    theirs = subject.theirs
    return () if isinstance(theirs, Failure) else tuple(theirs.buckets)


def _shape(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    return "[" + ", ".join(f"{len(g)}x{len(g[0])}" for g in groups if g) + "]"


def compare_dedup(subject: Subject, sides: Sides) -> list[Divergence]:
    """The graph right after each side's pass, by meaning; both judged when they differ, and
    both run against the original even when they agree (DIF-3, DIF-4)."""
    ours, theirs = subject.ours, subject.theirs
    if isinstance(theirs, Failure) and isinstance(theirs.error, ContractError):
        return [broke(sides, Component.DEDUP, theirs.error)]
    if isinstance(ours, Failure) or isinstance(theirs, Failure):
        blamed = blame(subject.judged_ours, subject.judged_theirs(theirs), sides.label,
                       "the pass crashed")  # fmt: skip
        blamed = _with_refusals(ours, blamed)
        error = theirs.error if isinstance(theirs, Failure) else None
        return [divergence(sides, Component.DEDUP, Kind.CRASH, blamed, error=error)]
    if same_output(ours.transformed, theirs.transformed, sides.strict_order):
        return _same_form(subject, sides, ours, theirs)
    a, b = canonical_graph(ours.transformed), canonical_graph(theirs.transformed)
    kind = Kind.ORDER if only_order_differs(a, b) else Kind.GRAPH
    difference = first_difference(a, b, ("reference", sides.label))
    blamed = blame(subject.judged_ours, subject.judged_theirs(theirs), sides.label, difference)
    if blamed.blame in (Blame.NEITHER, Blame.OTHER):
        blamed = _why_they_differ(subject, b, blamed)
    return [divergence(sides, Component.DEDUP, kind, blamed)]


def _same_form(
    subject: Subject, sides: Sides, ours: DedupOutput, theirs: DedupOutput
) -> list[Divergence]:
    """Equal meanings still run: the form leaves out node metadata, which torch's runtime
    reads (RPL-22: without `val` it runs the body on uninitialised operands), and a semantics
    both sides share could be wrong. Each side runs on the example inputs against the
    original; a side whose numbers differ is never in an agreement (DIF-4)."""
    graph = subject.graph
    judged = []
    for side in (ours, theirs):
        ran = compare_runs(graph.gm, side.transformed, graph.example_inputs)
        wrong = ran is not None and ran.wrong
        judged.append(ran.labelled("example inputs") if ran and wrong else RIGHT)
    if not any(j.wrong for j in judged):
        return []
    blamed = blame(judged[0], judged[1], sides.label, "the same graph runs differently")
    blamed = replace(blamed, evidence=replace(blamed.evidence, same_meaning=True))
    crash = any(j.evidence.raised is not None for j in judged if j.wrong)
    return [divergence(sides, Component.DEDUP, Kind.CRASH if crash else Kind.GRAPH, blamed)]


def _with_refusals(ours: ReferenceOutput | Failure, blamed: Blamed) -> Blamed:
    """`blamed` with the invariants of the reference's refusals in its evidence (DIF-11)."""
    if isinstance(ours, Failure) or not ours.refused:
        return blamed
    why = replace(blamed.evidence, refused=ours.refused[0], refusals=ours.refused)
    return replace(blamed, evidence=why)


def _why_they_differ(subject: Subject, theirs: CanonGraph, blamed: Blamed) -> Blamed:
    """`blamed` with why two graphs differ when the reference's is right: other groups, a
    refusal of the reference, or which of torch's ordering rules, run by the reference, give
    `theirs` (canonical); each in the detail and, but the groups, in the evidence."""
    ours, found = subject.ours, subject.theirs
    if isinstance(ours, Failure):
        return blamed
    detail, evidence = blamed.detail, blamed.evidence
    if not isinstance(found, Failure) and ours.groups != found.groups and found.groups:
        detail += "; they outlined different region groups (see tracker)"
    if ours.refusals:
        detail += f"; the reference refused {ours.refusals[0]}"
    evidence = _with_refusals(ours, blamed).evidence
    for policy in fewest_torch_rules():
        rerun = attempt(partial(subject.sides.reference.deduplicate, subject.graph.copy(), policy))
        if isinstance(rerun, DedupOutput) and canonical_graph(rerun.transformed) == theirs:
            detail += (
                f"; with torch's {policy.describe_torch_rules()} the reference gives the same graph"
            )
            rules = tuple(f.name for f in fields(policy) if not getattr(policy, f.name))
            evidence = replace(evidence, torch_rules=rules)
            break
    return replace(blamed, detail=detail, evidence=evidence)
