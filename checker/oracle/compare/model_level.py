"""The model-level component dedup compared on one capture (spec chapter 08, DIF-3, DIF-4,
DIF-27); the tracker's is `tracker_level`.

`Subject` runs each side's deduplication of the captured graph once, on its own copy, and judges
it when a comparison needs it. The graphs after the pass are compared by meaning and judged by
execution and the checker (`checker.oracle.compare.judge`); graphs that mean the same still
each run against the original, and the other side's still answers to the checker's
obligations (DIF-27).
A side that raises is judged wrong, never an exception of the diff; both sides are judged even
when one of them raised, so "both wrong" is a verdict.
"""

from __future__ import annotations

from dataclasses import fields, replace
from functools import cached_property, partial

import torch
import torch.fx

from checker.io.reports import plural
from checker.oracle.compare.canon import (
    CanonGraph,
    canonical_graph,
    first_that_matters,
    only_order_differs,
)
from checker.oracle.compare.divergence import (
    Blame,
    Divergence,
    Evidence,
    Kind,
    broke,
    divergence,
)
from checker.oracle.compare.judge import (
    RIGHT,
    Failure,
    Judgement,
    attempt,
    blame,
    compare_runs,
    free_choice,
    judge_obligations,
    judge_transformation,
)
from checker.oracle.compare.meaning import draws_reordered, same_output
from checker.oracle.protocol import (
    Deduplicates,
    DedupOutput,
)
from checker.oracle.sides.contract import ContractError, dedup_output
from checker.oracle.sides.impls import ReferenceOutput
from checker.oracle.sides.sides import Component, Sides
from reference.dynamo.capture import Capture
from reference.policy import fewest_torch_rules

Node = torch.fx.Node
INVOKE = torch.ops.higher_order.invoke_subgraph


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
        return attempt(lambda: dedup_output(found, self.graph.gm.graph))

    def judged_theirs(self, theirs: DedupOutput | Failure) -> Judgement:
        """The other side's output judged on its own (DIF-4)."""
        if isinstance(theirs, Failure):
            return Judgement.of_failure(theirs)
        graph = self.graph
        return judge_transformation(graph.gm, theirs.transformed, graph.example_inputs,
                                    theirs.extra_deps)  # fmt: skip


def compare_dedup(subject: Subject, sides: Sides) -> list[Divergence]:
    """The graph right after each side's pass, by meaning; both judged when they differ, and
    both run against the original even when they agree (DIF-3, DIF-4)."""
    ours, theirs = subject.ours, subject.theirs
    if isinstance(theirs, Failure) and isinstance(theirs.error, ContractError):
        return [broke(sides, Component.DEDUP, theirs.error)]
    if isinstance(ours, Failure) or isinstance(theirs, Failure):
        blamed = blame(subject.judged_ours, subject.judged_theirs(theirs), sides.label,
                       "the pass crashed")  # fmt: skip
        blamed = replace(blamed, evidence=_with_refusals(ours, blamed.evidence))
        error = theirs.error if isinstance(theirs, Failure) else None
        return [divergence(sides, Component.DEDUP, Kind.CRASH, blamed, error=error)]
    if same_output(ours.transformed, theirs.transformed, sides.strict_order):
        return _same_form(subject, sides, ours, theirs)
    reordered = only_order_differs(ours.transformed, theirs.transformed)
    b = canonical_graph(theirs.transformed)
    labels = ("reference", sides.label)
    difference = first_that_matters(ours.transformed, theirs.transformed, labels)
    blamed = blame(subject.judged_ours, subject.judged_theirs(theirs), sides.label, difference)
    if blamed.blame in (Blame.NEITHER, Blame.OTHER):
        why, evidence = _why_they_differ(subject, b, blamed.evidence)
        if blamed.blame is Blame.NEITHER:
            outlined = _outlined(ours, theirs, sides.label, reordered)
            blamed = free_choice(difference, "; ".join((outlined, *why)), evidence)
        else:
            blamed = replace(blamed, detail="; ".join((blamed.detail, *why)), evidence=evidence)
    kind = Kind.ORDER if reordered else Kind.GRAPH
    return [divergence(sides, Component.DEDUP, kind, blamed)]


def _outlined(ours: DedupOutput, theirs: DedupOutput, label: str, reordered: bool) -> str:
    """Why two right graphs differ, as far as the graphs tell (DIF-25): the same nodes in
    another order, or how many groups and calls each side outlined."""
    if reordered:
        return "both compute the original; the same nodes in another valid order"
    mine, yours = _called(ours.transformed), _called(theirs.transformed)
    if mine == yours:
        return f"both compute the original; both outlined {mine}"
    return f"both compute the original; {label} outlined {yours}, the reference {mine}"


def _called(gm: torch.fx.GraphModule) -> str:
    """How many subgraphs `gm`'s top graph calls, and how often: `2 groups (4 calls)`."""
    calls = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is INVOKE]
    groups = len({str(c.args[0].target) for c in calls if isinstance(c.args[0], Node)})
    if not groups:
        return "no group"
    return f"{plural(groups, 'group')} ({plural(len(calls), 'call')})"


def _same_form(
    subject: Subject, sides: Sides, ours: ReferenceOutput, theirs: DedupOutput
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
        return _obligations(subject, sides, theirs)
    blamed = blame(judged[0], judged[1], sides.label, "the same graph runs differently")
    evidence = replace(blamed.evidence, same_meaning=True, taken_over=ours.taken_over)
    blamed = replace(blamed, evidence=evidence)
    crash = any(j.evidence.raised is not None for j in judged if j.wrong)
    return [divergence(sides, Component.DEDUP, Kind.CRASH if crash else Kind.GRAPH, blamed)]


def _obligations(subject: Subject, sides: Sides, theirs: DedupOutput) -> list[Divergence]:
    """The other side's graph, which runs like the original and means what the reference's
    means, still answers to the checker's obligations (DIF-27): a violated one blames it,
    unless the reference's graph violates one too (then both)."""
    graph = subject.graph
    judged = judge_obligations(graph.gm, theirs.transformed, graph.example_inputs,
                               theirs.extra_deps)  # fmt: skip
    if not judged.wrong:
        return []
    difference = "the same meaning, but an obligation is violated"
    blamed = blame(subject.judged_ours, judged, sides.label, difference)
    blamed = replace(blamed, evidence=replace(blamed.evidence, same_meaning=True))
    return [divergence(sides, Component.DEDUP, Kind.GRAPH, blamed)]


def _with_refusals(ours: ReferenceOutput | Failure, evidence: Evidence) -> Evidence:
    """`evidence` with the invariants of the reference's refusals, and whether it kept a region
    whose getitem an earlier call took over (DIF-11, RPL-17)."""
    if isinstance(ours, Failure):
        return evidence
    return replace(evidence, refusals=ours.refused, taken_over=ours.taken_over)


REORDERED = "cause: random draws reordered (EFF-4: each draw takes the numbers the one before left)"


def _why_they_differ(
    subject: Subject, theirs: CanonGraph, evidence: Evidence
) -> tuple[list[str], Evidence]:
    """Why two graphs differ when the reference's is right: other groups, a refusal of the
    reference, or which of torch's ordering rules, run by the reference, give `theirs`
    (canonical); each as a reason and, but the groups, added to `evidence`."""
    ours, found = subject.ours, subject.theirs
    if isinstance(ours, Failure):
        return [], evidence
    why: list[str] = []
    if not isinstance(found, Failure) and draws_reordered(ours.transformed, found.transformed):
        why.append(REORDERED)
    if not isinstance(found, Failure) and ours.groups != found.groups and found.groups:
        see = " (see tracker)" if Component.TRACKER in subject.sides.components else ""
        why.append(f"they outlined different region groups{see}")
    if ours.refusals:
        why.append(f"the reference refused {ours.refusals[0]}")
        evidence = _with_refusals(ours, evidence)
    if not isinstance(found, Failure) and found.refusals:
        label, count = subject.sides.label, plural(len(found.refusals), "refusal")
        why.append(f"{label} said ({count}): {found.refusals[0]}")
    for policy in fewest_torch_rules():
        rerun = attempt(partial(subject.sides.reference.deduplicate, subject.graph.copy(), policy))
        if isinstance(rerun, DedupOutput) and canonical_graph(rerun.transformed) == theirs:
            rules = policy.describe_torch_rules()
            why.append(f"with torch's {rules} the reference gives the same graph")
            names = tuple(f.name for f in fields(policy) if not getattr(policy, f.name))
            evidence = replace(evidence, torch_rules=names)
            break
    return why, evidence
