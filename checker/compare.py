"""Comparing the two sides, component by component, and blaming the wrong one (spec chapter 08,
DIF-3 to DIF-5).

Each comparison runs both sides on the same input and compares canonical forms
(`checker.canon`); for every difference, `blame` decides which side is wrong from both sides'
`Judgement`s (`checker.judge`). Components:

  tracker  region groups by node names; a group is wrong if it overlaps or pairs unequal nodes
  dedup    the graph after the pass; judged by execution and the checker
  sort     three scrambles of the captured graph with its ordering deps; an order is wrong if a
           node precedes a dependency or the output is not last
  split    fixed partition policies x both orders; judged like dedup; both refusing agrees

Where both outputs are correct but differ, torch 2.13 is the specification (chapter 00,
"Ground truth"), so against torch the reference is wrong; against another implementation it is
unknown. A side that raises gives a `crash` divergence, never an exception. This module touches
torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
import torch.fx

from checker.canon import (
    bucket_faults,
    canonical_graph,
    first_difference,
    only_order_differs,
    order_faults,
    region_faults,
)
from checker.cases import SCRAMBLES, SPLIT_CASES, SplitCase, sort_input, split_with
from checker.impls import Deduplicates, FindsRegions, ReferenceImpl, Splits
from checker.judge import Judgement, attempt, error_line, judge_transformation
from reference.errors import FxOracleError

COMPONENTS = ("tracker", "dedup", "sort", "split")


@dataclass(frozen=True, slots=True)
class Divergence:
    """One difference between the sides, and which side is wrong (DIF-3, DIF-4)."""

    component: str
    kind: str  # regions | graph | order | crash | refusal | oracle-error
    wrong: str  # "reference", the other side's label, or "unknown"
    detail: str
    case: str = ""  # the split case or sort scramble, "" for model-level components

    def to_json(self) -> dict[str, str]:
        detail = f"[{self.case}] {self.detail}" if self.case else self.detail
        return {"component": self.component, "kind": self.kind, "wrong": self.wrong,
                "detail": detail}  # fmt: skip


@dataclass(slots=True)
class Sides:
    """The reference, the implementation under test (`spec` as given to `--against`, `label`
    as reports name it), the components to run and the split cases."""

    reference: Any
    other: Any
    spec: str
    label: str
    components: tuple[str, ...]
    split_cases: tuple[SplitCase, ...] = SPLIT_CASES


def reference_capture(path: Path, sides: Sides) -> Any:
    """The reference's capture of `path`: the graph the graph-level components work on."""
    return sides.reference.deduplicate(path)


def blame(ours: Judgement, theirs: Judgement, sides: Sides, difference: str) -> tuple[str, str]:
    """(wrong side, detail) from both sides' judgements (DIF-4)."""
    if ours.wrong and not theirs.wrong:
        return "reference", f"{difference}; reference: {ours.reason}"
    if theirs.wrong and not ours.wrong:
        return sides.label, f"{difference}; {sides.label}: {theirs.reason}"
    if ours.wrong and ours.concrete != theirs.concrete:  # a run outweighs a checker verdict
        side, j = ("reference", ours) if ours.concrete else (sides.label, theirs)
        other = theirs if ours.concrete else ours
        return side, f"{difference}; {side}: {j.reason} (other side: {other.reason})"
    if ours.wrong:
        return "unknown", f"{difference}; both wrong: {ours.reason} / {theirs.reason}"
    reasons = "; ".join(r for r in (ours.reason, theirs.reason) if r)
    return "unknown", f"{difference}; {reasons or 'both correct'}"


def compare_tracker(path: Path, sides: Sides) -> list[Divergence]:
    """Region groups by node names; faults decide who is wrong (DIF-4)."""
    ours = sides.reference.find_regions(path)
    assert isinstance(sides.other, FindsRegions), "DIF-1: the part is implemented"
    theirs = attempt(lambda: sides.other.find_regions(path))
    if isinstance(theirs, Exception):
        return [_crashed("tracker", sides.label, theirs)]
    if ours == theirs:
        return []
    base = reference_capture(path, sides)
    faults = region_faults(base.original, ours), region_faults(base.original, theirs)
    judged = [Judgement.of_fault(f[0] if f else "") for f in faults]
    sizes = f"reference {_shape(ours)}, {sides.label} {_shape(theirs)}"
    if judged[0].right and judged[1].right:  # both valid: is the difference torch's key's?
        merged = bucket_faults(base.original, _their_buckets(path, sides))
        if merged:
            return [Divergence("tracker", "regions", "unknown",
                               f"{sizes}; both valid, {sides.label}'s key merges unequal "
                               f"nodes (TRK-5): {merged[0]}")]  # fmt: skip
    wrong, detail = blame(judged[0], judged[1], sides, sizes)
    return [Divergence("tracker", "regions", wrong, detail)]


def _their_buckets(path: Path, sides: Sides) -> tuple[tuple[str, ...], ...]:
    if not isinstance(sides.other, Deduplicates):
        return ()
    found = attempt(lambda: sides.other.deduplicate(path))
    return () if isinstance(found, Exception) else tuple(found.buckets)


def _shape(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    return "[" + ", ".join(f"{len(g)}x{len(g[0])}" for g in groups if g) + "]"


def _crashed(component: str, label: str, e: BaseException, case: str = "") -> Divergence:
    return Divergence(component, "crash", label, f"{label} raised {error_line(e)}", case)


def compare_dedup(path: Path, sides: Sides) -> list[Divergence]:
    """The graph right after each side's pass, canonically; judged when they differ."""
    ours = reference_capture(path, sides)
    assert isinstance(sides.other, Deduplicates), "DIF-1: the part is implemented"
    theirs = attempt(lambda: sides.other.deduplicate(path))
    if isinstance(theirs, Exception):
        return [_crashed("dedup", sides.label, theirs)]
    a, b = canonical_graph(ours.transformed), canonical_graph(theirs.transformed)
    if a == b:
        return []
    kind = "order" if only_order_differs(a, b) else "graph"
    difference = first_difference(a, b, ("reference", sides.label))
    judged = [
        judge_transformation(o.original, o.transformed, o.inputs, o.extra_deps)
        for o in (ours, theirs)
    ]
    if judged[0].right and judged[1].right:
        reason = "both correct"
        if ours.groups != theirs.groups:
            reason += "; they outlined different region groups (see tracker)"
        if ours.refusals:
            reason += f"; the reference refused {ours.refusals[0]}"
        rules = _torch_rules_explaining(path, sides, b)
        if rules:
            reason += f"; with torch's {rules} the reference gives the same graph"
        return [Divergence("dedup", kind, "unknown", f"{difference}; {reason}")]
    wrong, detail = blame(judged[0], judged[1], sides, difference)
    return [Divergence("dedup", kind, wrong, detail)]


TORCH_RULES = (
    ((True, False), "unpinned grad mode (SRT-8)"),
    ((False, True), "erasure that drops an erased node's own deps (SRT-10)"),
    ((True, True), "unpinned grad mode and lossy erasure (SRT-8, SRT-10)"),
)


def _torch_rules_explaining(path: Path, sides: Sides, theirs: object) -> str:
    """Which of torch's ordering rules, run by the reference, give `theirs` (canonical)."""
    if not isinstance(sides.reference, ReferenceImpl):
        return ""
    rerun = sides.reference.deduplicate_with_torch_rules
    for rules, name in TORCH_RULES:
        found = attempt(partial(rerun, path, rules))
        if not isinstance(found, Exception) and canonical_graph(found.transformed) == theirs:
            return name
    return ""


def compare_sort(path: Path, sides: Sides) -> list[Divergence]:
    """Each scramble of the captured graph sorted by both sides with the same deps (DIF-5)."""
    base = reference_capture(path, sides).original
    return [d for scramble in SCRAMBLES for d in sort_case(base, sides, scramble)]


def sort_case(base: torch.fx.GraphModule, sides: Sides, scramble: str) -> list[Divergence]:
    """Both sides sort their own scrambled copy of `base`; orders compared by node names."""
    results = []
    for side in (sides.reference, sides.other):
        gm, deps = sort_input(base, scramble)
        ran = attempt(partial(side.stable_sort, gm.graph, deps))
        results.append(ran if isinstance(ran, Exception) else (gm, deps))
    return _sort_divergence(results, sides, scramble)


def _sort_divergence(results: list[Any], sides: Sides, scramble: str) -> list[Divergence]:
    names = [[n.name for n in r[0].graph.nodes] if isinstance(r, tuple) else None for r in results]
    if names[0] is not None and names[0] == names[1]:
        return []
    verdicts = []
    for r in results:
        fault = f"raised {error_line(r)}" if isinstance(r, Exception) else order_faults(*r)
        verdicts.append(Judgement.of_fault(fault))
    if all(isinstance(r, Exception) for r in results):
        return []
    kind = "crash" if any(isinstance(r, Exception) for r in results) else "order"
    wrong, detail = blame(verdicts[0], verdicts[1], sides, "orders differ")
    return [Divergence("sort", kind, wrong, detail, scramble)]


def compare_split(path: Path, sides: Sides) -> list[Divergence]:
    """Every split case on the captured graph; both refusing (raising) agrees (DIF-5)."""
    base = reference_capture(path, sides)
    assert isinstance(sides.other, Splits), "DIF-1: the part is implemented"
    return [d for c in sides.split_cases for d in split_case(base.original, base.inputs, sides, c)]


def split_case(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides, case: SplitCase
) -> list[Divergence]:
    """Both sides split `gm` under `case`; judged against `gm` on `inputs` if they differ."""
    outs = [attempt(partial(split_with, side, gm, case)) for side in (sides.reference, sides.other)]
    if any(isinstance(o, NotImplementedError) for o in outs):
        return []  # outside what the implementation supports
    return _split_divergence(outs, gm, inputs, sides, case)


def _split_divergence(
    outs: list[Any], gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides,
    case: SplitCase,
) -> list[Divergence]:  # fmt: skip
    ours, theirs = outs
    if isinstance(ours, Exception) and not isinstance(ours, FxOracleError):
        return [_crashed("split", "reference", ours, str(case))]
    if isinstance(ours, Exception) and isinstance(theirs, Exception):
        return []  # both refuse
    if not isinstance(ours, Exception) and not isinstance(theirs, Exception):
        a, b = canonical_graph(ours), canonical_graph(theirs)
        if a == b:
            return []
        difference = first_difference(a, b, ("reference", sides.label))
        kind = "order" if only_order_differs(a, b) else "graph"
    else:
        refused = "reference" if isinstance(ours, Exception) else sides.label
        error = ours if isinstance(ours, Exception) else theirs
        difference = f"{refused} raised {error_line(error)}"
        kind = "refusal" if refused == "reference" else "crash"
    judged = [judge_transformation(gm, o, inputs, None, grad_probes=True) for o in outs]
    wrong, detail = blame(judged[0], judged[1], sides, difference)
    return [Divergence("split", kind, wrong, detail, str(case))]


COMPARE: Mapping[str, Callable[[Path, Sides], list[Divergence]]] = {
    "tracker": compare_tracker, "dedup": compare_dedup, "sort": compare_sort,
    "split": compare_split,
}  # fmt: skip
