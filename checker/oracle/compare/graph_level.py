"""The graph-level components, sort and split, run on fixed cases of the captured graph (spec
chapter 08, DIF-4, DIF-5, DIF-22, DIF-26).

`sort_case` has both sides sort their own scrambled copy (`checker.oracle.sides.cases`) with the
same deps and compares the orders by node names; an order is wrong if a node precedes a
dependency or the output is not last. `split_case` has both sides split the graph under one
partition policy and compares the results by meaning (and positions with `--strict-order`).
A split that raises refuses: both refusing agrees; one refusing is a `refusal`, judged by the
other's split. A side's output is judged on its own (`checker.oracle.compare.judge`) when the
two differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import torch
import torch.fx

from checker.oracle.compare.canon import first_that_matters, only_order_differs
from checker.oracle.compare.divergence import (
    Blame,
    Blamed,
    Divergence,
    Evidence,
    Kind,
    broke,
    divergence,
)
from checker.oracle.compare.faults import order_faults
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
from checker.oracle.compare.meaning import same_output
from checker.oracle.compare.model_level import Subject
from checker.oracle.protocol import Sorts, Splits
from checker.oracle.sides.cases import SCRAMBLES, SplitCase, sort_input, split_with
from checker.oracle.sides.contract import ContractError, same_nodes, split_output
from checker.oracle.sides.sides import Component, Sides
from reference.errors import describe

Node = torch.fx.Node


def compare_sort(subject: Subject, sides: Sides) -> list[Divergence]:
    """Each scramble of the captured graph sorted by both sides with the same deps (DIF-5)."""
    return [d for scramble in SCRAMBLES for d in sort_case(subject.graph.gm, sides, scramble)]


def sort_case(base: torch.fx.GraphModule, sides: Sides, scramble: str) -> list[Divergence]:
    """Both sides sort their own scrambled copy of `base`; orders compared by node names."""
    results: list[Sorted | Failure] = []
    for side in (sides.reference, sides.other):
        assert isinstance(side, Sorts), "DIF-1: the part is implemented"
        gm, deps = sort_input(base, scramble)
        before = [n.name for n in gm.graph.nodes]
        ran = attempt(partial(side.stable_sort, gm.graph, deps))
        if not isinstance(ran, Failure):
            ran = attempt(partial(same_nodes, before, gm.graph))
        results.append(ran if isinstance(ran, Failure) else Sorted(gm, deps))
    theirs = results[1]
    if isinstance(theirs, Failure) and isinstance(theirs.error, ContractError):
        return [broke(sides, Component.SORT, theirs.error, scramble)]
    return _sort_divergence(results, sides, scramble)


@dataclass(frozen=True, slots=True)
class Sorted:
    """A side's sorted copy of the graph, and the deps it was sorted with."""

    gm: torch.fx.GraphModule
    deps: Mapping[Node, Sequence[Node]]

    def names(self) -> list[str]:
        return [n.name for n in self.gm.graph.nodes]

    def judged(self) -> Judgement:
        """Wrong when a node precedes a dependency or the output is not last (DIF-4)."""
        return Judgement.of_fault(order_faults(self.gm, self.deps))


def _sort_divergence(
    results: Sequence[Sorted | Failure], sides: Sides, scramble: str
) -> list[Divergence]:
    names = [r.names() if isinstance(r, Sorted) else None for r in results]
    if names[0] is not None and names[0] == names[1]:
        return []
    verdicts = [Judgement.of_failure(r) if isinstance(r, Failure) else r.judged() for r in results]
    if all(isinstance(r, Failure) for r in results):
        return []
    kind = Kind.CRASH if any(isinstance(r, Failure) for r in results) else Kind.ORDER
    difference = _first_place(names[0], names[1], sides.label)
    blamed = blame(verdicts[0], verdicts[1], sides.label, difference)
    if blamed.blame is Blame.NEITHER:
        blamed = free_choice(difference, VALID_ORDERS)
    theirs = results[1]
    error = theirs.error if isinstance(theirs, Failure) else None
    return [divergence(sides, Component.SORT, kind, blamed, scramble, error)]


VALID_ORDERS = "both orders are valid: every node after its inputs and dependencies, output last"


def _first_place(ours: Sequence[str] | None, theirs: Sequence[str] | None, label: str) -> str:
    """Where two orders first differ: `orders differ at position 3: reference add, X mul`."""
    if ours is None or theirs is None:
        return "orders differ"
    i = next(i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b)
    return f"orders differ at position {i}: reference {ours[i]}, {label} {theirs[i]}"


def compare_split(subject: Subject, sides: Sides) -> list[Divergence]:
    """Every split case on the captured graph; both refusing (raising) agrees (DIF-5)."""
    graph = subject.graph
    return [
        d for c in sides.split_cases for d in split_case(graph.gm, graph.example_inputs, sides, c)
    ]


def split_case(
    gm: torch.fx.GraphModule, inputs: tuple[object, ...], sides: Sides, case: SplitCase
) -> list[Divergence]:
    """Both sides split `gm` under `case`; judged against `gm` on `inputs` if they differ."""
    other = sides.other
    assert isinstance(other, Splits), "DIF-1: the part is implemented"
    ours = attempt(partial(split_with, sides.reference, gm, case))
    found = attempt(partial(split_with, other, gm, case))
    if any(isinstance(o, Failure) and o.unsupported for o in (ours, found)):
        return []  # outside what the implementation supports
    theirs = found if isinstance(found, Failure) else attempt(partial(split_output, found))
    if isinstance(theirs, Failure) and theirs.broke_contract:
        assert isinstance(theirs.error, ContractError)
        return [broke(sides, Component.SPLIT, theirs.error, str(case))]
    return _split_divergence((ours, theirs), gm, inputs, sides, case)


SplitOut = torch.fx.GraphModule | Failure  # a side's split module, or what it raised


def _split_divergence(
    outs: tuple[SplitOut, SplitOut], gm: torch.fx.GraphModule, inputs: tuple[object, ...],
    sides: Sides, case: SplitCase,
) -> list[Divergence]:  # fmt: skip
    ours, theirs = outs
    if isinstance(ours, Failure) and not ours.refused:
        crash = Blamed(Blame.REFERENCE, f"reference {ours}", Evidence(raised=ours.raised))
        return [divergence(sides, Component.SPLIT, Kind.CRASH, crash, str(case))]
    if isinstance(ours, Failure) and isinstance(theirs, Failure):
        return []  # both refuse (DIF-22)
    if isinstance(ours, Failure) or isinstance(theirs, Failure):
        return [_refusal(outs, gm, inputs, sides, case)]
    if same_output(ours, theirs, sides.strict_order):
        return _same_split((ours, theirs), gm, inputs, sides, case)
    labels = ("reference", sides.label)
    difference = first_that_matters(ours, theirs, labels)
    judged = [judge_transformation(gm, o, inputs, None, grad_probes=True) for o in outs]
    blamed = blame(judged[0], judged[1], sides.label, difference)
    if blamed.blame is Blame.NEITHER:
        blamed = free_choice(difference, _why_splits_differ(ours, theirs, sides.label))
    return [divergence(sides, Component.SPLIT, Kind.GRAPH, blamed, str(case))]


def _why_splits_differ(ours: torch.fx.GraphModule, theirs: torch.fx.GraphModule, label: str) -> str:
    """Why two right splits differ (DIF-25, DIF-26): the same partitions called in another
    order (the reference calls them in torch's, SPL-7), or only that both compute `gm`."""
    if only_order_differs(ours, theirs):
        return (
            f"both compute the original; {label} calls the same partitions in another valid "
            "order (the reference: torch's, the last ready partition first, SPL-7)"
        )
    return "both compute the original"


def _refusal(
    outs: tuple[SplitOut, SplitOut], gm: torch.fx.GraphModule, inputs: tuple[object, ...],
    sides: Sides, case: SplitCase,
) -> Divergence:  # fmt: skip
    """One side refused (raised) where the other split: the split is judged on its own (DIF-22).
    Right: the refuser refused a case that can be split, and is blamed; wrong: the splitter is
    blamed, the refusal stands; unknown: no verdict."""
    ours, theirs = outs
    refused = ours if isinstance(ours, Failure) else theirs
    split = theirs if isinstance(ours, Failure) else ours
    assert isinstance(refused, Failure) and not isinstance(split, Failure)
    names = ("reference", sides.label) if refused is ours else (sides.label, "the reference")
    blames = (Blame.REFERENCE, Blame.OTHER) if refused is ours else (Blame.OTHER, Blame.REFERENCE)
    judged = judge_transformation(gm, split, inputs, None, grad_probes=True)
    said = f"{names[0]} refused ({describe(refused.error)})"
    if judged.right:
        detail = f"{names[0]} refused a case {names[1]} splits correctly: {describe(refused.error)}"
        blamed = Blamed(blames[0], detail, Evidence(raised=refused.raised))
    elif judged.wrong:
        blamed = Blamed(blames[1], f"{said}; {names[1]}: {judged.reason}", judged.evidence)
    else:
        blamed = Blamed(Blame.UNKNOWN, f"{said}; {names[1]}: {judged.reason}")
    error = theirs.error if isinstance(theirs, Failure) else None
    return divergence(sides, Component.SPLIT, Kind.REFUSAL, blamed, str(case), error)


def _same_split(
    outs: tuple[torch.fx.GraphModule, torch.fx.GraphModule], gm: torch.fx.GraphModule,
    inputs: tuple[object, ...], sides: Sides, case: SplitCase,
) -> list[Divergence]:  # fmt: skip
    """Two splits that mean the same still each run against the original (DIF-4), and the
    other side's answers to the checker's obligations (DIF-27)."""
    ran = [compare_runs(gm, out, inputs) for out in outs]
    judged = [RIGHT if r is None or not r.wrong else r for r in ran]
    difference = "the same split runs differently"
    if not any(j.wrong for j in judged):
        judged[1] = judge_obligations(gm, outs[1], inputs, None)  # DIF-27
        if not judged[1].wrong:
            return []
        judged[0] = judge_obligations(gm, outs[0], inputs, None)
        difference = "the same meaning, but an obligation is violated"
    blamed = blame(judged[0], judged[1], sides.label, difference)
    return [divergence(sides, Component.SPLIT, Kind.GRAPH, blamed, str(case))]
