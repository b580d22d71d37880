"""Comparing the two sides, component by component, and blaming the wrong one (spec chapter 08,
DIF-3 to DIF-5).

Each comparison runs both sides on copies of one captured graph (`Subject`) and compares
canonical forms (`checker.oracle.canon`); for every difference, `blame` decides which side is
wrong from both sides' `Judgement`s (`checker.oracle.judge`). Components:

  tracker  region groups by node names; a group is wrong if it overlaps or pairs unequal nodes
  dedup    the graph after the pass; judged by execution and the checker
  sort     three scrambles of the captured graph with its ordering deps; an order is wrong if a
           node precedes a dependency or the output is not last
  split    fixed partition policies x both orders; judged like dedup; both refusing agrees

A side that raises is judged wrong, never an exception of the diff; both sides are judged even
when one of them raised, so "both wrong" is a verdict. This module touches torch objects, so
`Any` appears where they cross its edge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any

import torch
import torch.fx

from checker.oracle.canon import (
    bucket_faults,
    canonical_graph,
    first_difference,
    only_order_differs,
    order_faults,
    region_faults,
)
from checker.oracle.cases import SCRAMBLES, SPLIT_CASES, SplitCase, sort_input, split_with
from checker.oracle.contract import (
    ContractError,
    dedup_output,
    region_groups,
    same_nodes,
    split_output,
    traceback_of,
)
from checker.oracle.divergence import Blame, Component, Divergence, Kind
from checker.oracle.impls import ReferenceImpl
from checker.oracle.judge import Judgement, attempt, compare_runs, judge_transformation
from checker.oracle.meaning import Interner, meaning
from checker.oracle.protocol import (
    CapturedGraph,
    Deduplicates,
    DedupOutput,
    FindsRegions,
    Sorts,
    Splits,
)
from checker.proof.inline import InlineError
from reference.errors import FxOracleError, describe
from reference.policy import fewest_torch_rules


@dataclass(frozen=True, slots=True)
class Sides:
    """The reference, the implementation under test (`spec` as given to `--against`, `label`
    as reports name it), the components to run and the split cases."""

    reference: ReferenceImpl
    other: object  # an implementation: some of the Protocols of `checker.oracle.protocol`
    spec: str
    label: str
    components: tuple[Component, ...]
    split_cases: tuple[SplitCase, ...] = SPLIT_CASES
    strict_order: bool = False  # compare positions, not meanings (DIF-3)

    def same(self, ours: torch.fx.GraphModule, theirs: torch.fx.GraphModule) -> bool:
        """The two outputs agree: the same meaning and, with `strict_order`, the same node
        positions too (DIF-3)."""
        interner = Interner()
        try:
            if meaning(ours, interner) != meaning(theirs, interner):
                return False
        except InlineError:  # not the same: the judge then says which side is malformed
            return False
        return not self.strict_order or canonical_graph(ours) == canonical_graph(theirs)

    def divergence(
        self, component: Component, kind: Kind, blame: Blame, detail: str, case: str = "",
        error: BaseException | None = None,
    ) -> Divergence:  # fmt: skip
        trace = "" if error is None else traceback_of(error)
        return Divergence(component, kind, blame, detail, self.label, case, traceback=trace)

    def only(self, component: Component) -> Sides:
        return replace(self, components=(component,))


class Subject:
    """One captured graph under diff, and each side's deduplication of it (run once, lazily,
    on its own copy)."""

    def __init__(self, graph: CapturedGraph, sides: Sides) -> None:
        self.graph, self.sides = graph, sides

    @cached_property
    def ours(self) -> DedupOutput | Exception:
        try:
            return self.sides.reference.deduplicate(self.graph.copy())
        except Exception as e:  # the reference's crash is judged like any side's (DIF-4)
            return e

    @cached_property
    def judged_ours(self) -> Judgement:
        """The reference's output judged on its own (DIF-4), when a comparison needs it."""
        graph, ours = self.graph, self.ours
        if isinstance(ours, Exception):
            return Judgement("wrong", f"raised {describe(ours)}")
        return judge_transformation(graph.gm, ours.transformed, graph.example_inputs,
                                    ours.extra_deps)  # fmt: skip

    @cached_property
    def theirs(self) -> DedupOutput | Exception:
        other = self.sides.other
        if not isinstance(other, Deduplicates):
            return NotImplementedError("no deduplicate")
        found = attempt(lambda: other.deduplicate(self.graph.copy()))
        if isinstance(found, Exception):
            return found
        try:
            return dedup_output(found)
        except ContractError as e:  # the plug-in's fault, reported as such (DIF-12)
            return e

    def judged_theirs(self, theirs: DedupOutput | Exception) -> Judgement:
        """The other side's output judged on its own (DIF-4)."""
        if isinstance(theirs, Exception):
            return Judgement("wrong", f"raised {describe(theirs)}")
        graph = self.graph
        return judge_transformation(graph.gm, theirs.transformed, graph.example_inputs,
                                    theirs.extra_deps)  # fmt: skip


def blame(ours: Judgement, theirs: Judgement, label: str, difference: str) -> tuple[Blame, str]:
    """(blame, detail) from both sides' judgements (DIF-4)."""
    if ours.wrong and not theirs.wrong:
        return Blame.REFERENCE, f"{difference}; reference: {ours.reason}"
    if theirs.wrong and not ours.wrong:
        return Blame.OTHER, f"{difference}; {label}: {theirs.reason}"
    if ours.wrong and ours.concrete != theirs.concrete:  # a run outweighs a checker verdict
        side, j, other = (
            (Blame.REFERENCE, ours, theirs) if ours.concrete else (Blame.OTHER, theirs, ours)
        )
        name = "reference" if side is Blame.REFERENCE else label
        return side, f"{difference}; {name}: {j.reason} (other side: {other.reason})"
    if ours.wrong:
        return Blame.BOTH, f"{difference}; both wrong: {ours.reason} / {theirs.reason}"
    if ours.right and theirs.right:
        return Blame.NEITHER, f"{difference}; both correct"
    reasons = "; ".join(r for r in (ours.reason, theirs.reason) if r)
    return Blame.UNKNOWN, f"{difference}; {reasons}"


def compare_tracker(subject: Subject, sides: Sides) -> list[Divergence]:
    """Region groups by node names; faults decide who is wrong (DIF-4)."""
    reference = subject.ours
    ours = (
        sides.reference.find_regions(subject.graph.copy())
        if isinstance(reference, Exception)
        else reference.groups
    )
    other = sides.other
    assert isinstance(other, FindsRegions), "DIF-1: the part is implemented"
    found = attempt(lambda: other.find_regions(subject.graph.copy()))
    if isinstance(found, Exception):
        return [_crashed(sides, Component.TRACKER, found)]
    theirs = attempt(lambda: region_groups(found))
    if isinstance(theirs, ContractError):
        return [_broke(sides, Component.TRACKER, theirs)]
    if ours == theirs:
        return []
    base = subject.graph.gm
    judged = [Judgement.of_fault(next(iter(region_faults(base, g)), "")) for g in (ours, theirs)]
    sizes = f"reference {_shape(ours)}, {sides.label} {_shape(theirs)}"
    if judged[0].right and judged[1].right:  # both valid: is the difference the other's key's?
        merged = bucket_faults(base, _their_buckets(subject))
        if merged:
            detail = f"{sizes}; both valid, {sides.label}'s key merges unequal nodes (TRK-5): "
            return [
                sides.divergence(Component.TRACKER, Kind.REGIONS, Blame.NEITHER, detail + merged[0])
            ]
    found, detail = blame(judged[0], judged[1], sides.label, sizes)
    return [sides.divergence(Component.TRACKER, Kind.REGIONS, found, detail)]


def _their_buckets(subject: Subject) -> tuple[tuple[str, ...], ...]:
    theirs = subject.theirs
    return () if isinstance(theirs, Exception) else tuple(theirs.buckets)


def _shape(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    return "[" + ", ".join(f"{len(g)}x{len(g[0])}" for g in groups if g) + "]"


def _crashed(sides: Sides, component: Component, e: BaseException, case: str = "") -> Divergence:
    detail = f"{sides.label} raised {describe(e)}"
    return sides.divergence(component, Kind.CRASH, Blame.OTHER, detail, case, e)


def _broke(sides: Sides, component: Component, e: ContractError, case: str = "") -> Divergence:
    """The other side broke the plug-in contract: its fault, never fxoracle's (DIF-12)."""
    return sides.divergence(component, Kind.CONTRACT, Blame.OTHER, str(e), case)


def compare_dedup(subject: Subject, sides: Sides) -> list[Divergence]:
    """The graph right after each side's pass, by meaning; both judged when they differ, and
    both run against the original even when they agree (DIF-3, DIF-4)."""
    ours, theirs = subject.ours, subject.theirs
    if isinstance(theirs, ContractError):
        return [_broke(sides, Component.DEDUP, theirs)]
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        found, detail = blame(subject.judged_ours, subject.judged_theirs(theirs), sides.label,
                              "the pass crashed")  # fmt: skip
        error = theirs if isinstance(theirs, Exception) else None
        return [sides.divergence(Component.DEDUP, Kind.CRASH, found, detail, error=error)]
    if sides.same(ours.transformed, theirs.transformed):
        return _same_form(subject, sides, ours, theirs)
    a, b = canonical_graph(ours.transformed), canonical_graph(theirs.transformed)
    kind = Kind.ORDER if only_order_differs(a, b) else Kind.GRAPH
    difference = first_difference(a, b, ("reference", sides.label))
    found, detail = blame(subject.judged_ours, subject.judged_theirs(theirs), sides.label,
                          difference)  # fmt: skip
    if found in (Blame.NEITHER, Blame.OTHER):
        detail += _why_they_differ(subject, b)
    return [sides.divergence(Component.DEDUP, kind, found, detail)]


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
        judged.append(Judgement(ran.verdict, f"example inputs: {ran.reason}") if ran and wrong
                      else Judgement("right", ""))  # fmt: skip
    if not any(j.wrong for j in judged):
        return []
    found, detail = blame(judged[0], judged[1], sides.label, "the same graph runs differently")
    kind = Kind.CRASH if any("raised" in j.reason for j in judged if j.wrong) else Kind.GRAPH
    return [sides.divergence(Component.DEDUP, kind, found, detail)]


def _why_they_differ(subject: Subject, theirs: object) -> str:
    """Why two graphs differ when the reference's is right: other groups, a refusal of the
    reference, or which of torch's ordering rules, run by the reference, give `theirs`
    (canonical)."""
    ours, found = subject.ours, subject.theirs
    reason = ""
    if isinstance(ours, Exception):
        return reason
    if not isinstance(found, Exception) and ours.groups != found.groups and found.groups:
        reason += "; they outlined different region groups (see tracker)"
    if ours.refusals:
        reason += f"; the reference refused {ours.refusals[0]}"
    for policy in fewest_torch_rules():
        rerun = attempt(partial(subject.sides.reference.deduplicate, subject.graph.copy(), policy))
        if isinstance(rerun, DedupOutput) and canonical_graph(rerun.transformed) == theirs:
            name = policy.describe_torch_rules()
            return reason + f"; with torch's {name} the reference gives the same graph"
    return reason


def compare_sort(subject: Subject, sides: Sides) -> list[Divergence]:
    """Each scramble of the captured graph sorted by both sides with the same deps (DIF-5)."""
    return [d for scramble in SCRAMBLES for d in sort_case(subject.graph.gm, sides, scramble)]


def sort_case(base: torch.fx.GraphModule, sides: Sides, scramble: str) -> list[Divergence]:
    """Both sides sort their own scrambled copy of `base`; orders compared by node names."""
    results = []
    for side in (sides.reference, sides.other):
        assert isinstance(side, Sorts), "DIF-1: the part is implemented"
        gm, deps = sort_input(base, scramble)
        before = [n.name for n in gm.graph.nodes]
        ran = attempt(partial(side.stable_sort, gm.graph, deps))
        if not isinstance(ran, Exception):
            ran = attempt(partial(same_nodes, before, gm.graph))
        results.append(ran if isinstance(ran, Exception) else (gm, deps))
    if isinstance(results[1], ContractError):
        return [_broke(sides, Component.SORT, results[1], scramble)]
    return _sort_divergence(results, sides, scramble)


def _sort_divergence(results: list[Any], sides: Sides, scramble: str) -> list[Divergence]:
    names = [[n.name for n in r[0].graph.nodes] if isinstance(r, tuple) else None for r in results]
    if names[0] is not None and names[0] == names[1]:
        return []
    verdicts = []
    for r in results:
        fault = f"raised {describe(r)}" if isinstance(r, Exception) else order_faults(*r)
        verdicts.append(Judgement.of_fault(fault))
    if all(isinstance(r, Exception) for r in results):
        return []
    kind = Kind.CRASH if any(isinstance(r, Exception) for r in results) else Kind.ORDER
    found, detail = blame(verdicts[0], verdicts[1], sides.label, "orders differ")
    error = results[1] if isinstance(results[1], Exception) else None
    return [sides.divergence(Component.SORT, kind, found, detail, scramble, error)]


def compare_split(subject: Subject, sides: Sides) -> list[Divergence]:
    """Every split case on the captured graph; both refusing (raising) agrees (DIF-5)."""
    assert isinstance(sides.other, Splits), "DIF-1: the part is implemented"
    graph = subject.graph
    return [
        d for c in sides.split_cases for d in split_case(graph.gm, graph.example_inputs, sides, c)
    ]


def split_case(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides, case: SplitCase
) -> list[Divergence]:
    """Both sides split `gm` under `case`; judged against `gm` on `inputs` if they differ."""
    outs = [attempt(partial(split_with, side, gm, case)) for side in (sides.reference, sides.other)]
    if any(isinstance(o, NotImplementedError) for o in outs):
        return []  # outside what the implementation supports
    if not isinstance(outs[1], Exception):
        outs[1] = attempt(partial(split_output, outs[1]))
    if isinstance(outs[1], ContractError):
        return [_broke(sides, Component.SPLIT, outs[1], str(case))]
    return _split_divergence(outs, gm, inputs, sides, case)


def _split_divergence(
    outs: list[Any], gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides,
    case: SplitCase,
) -> list[Divergence]:  # fmt: skip
    ours, theirs = outs
    if isinstance(ours, Exception) and not isinstance(ours, FxOracleError):
        detail = f"reference raised {describe(ours)}"
        return [sides.divergence(Component.SPLIT, Kind.CRASH, Blame.REFERENCE, detail, str(case))]
    if isinstance(ours, Exception) and isinstance(theirs, Exception):
        return []  # both refuse
    if not isinstance(ours, Exception) and not isinstance(theirs, Exception):
        if sides.same(ours, theirs):
            return _same_split(outs, gm, inputs, sides, case)
        a, b = canonical_graph(ours), canonical_graph(theirs)
        difference = first_difference(a, b, ("reference", sides.label))
        kind = Kind.ORDER if only_order_differs(a, b) else Kind.GRAPH
    else:
        refused = "reference" if isinstance(ours, Exception) else sides.label
        error = ours if isinstance(ours, Exception) else theirs
        difference = f"{refused} raised {describe(error)}"
        kind = Kind.REFUSAL if refused == "reference" else Kind.CRASH
    judged = [judge_transformation(gm, o, inputs, None, grad_probes=True) for o in outs]
    found, detail = blame(judged[0], judged[1], sides.label, difference)
    error = theirs if isinstance(theirs, Exception) else None
    return [sides.divergence(Component.SPLIT, kind, found, detail, str(case), error)]


def _same_split(
    outs: list[Any], gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides,
    case: SplitCase,
) -> list[Divergence]:  # fmt: skip
    """Two splits that mean the same still each run against the original (DIF-4)."""
    ran = [compare_runs(gm, out, inputs) for out in outs]
    judged = [Judgement("right", "") if r is None or not r.wrong else r for r in ran]
    if not any(j.wrong for j in judged):
        return []
    found, detail = blame(judged[0], judged[1], sides.label, "the same split runs differently")
    return [sides.divergence(Component.SPLIT, Kind.GRAPH, found, detail, str(case))]


COMPARE: Mapping[Component, Callable[[Subject, Sides], list[Divergence]]] = {
    Component.TRACKER: compare_tracker, Component.DEDUP: compare_dedup,
    Component.SORT: compare_sort, Component.SPLIT: compare_split,
}  # fmt: skip
