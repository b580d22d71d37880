"""The graph-level components, sort and split, run on fixed cases of the captured graph (spec
chapter 08, DIF-4, DIF-5).

`sort_case` has both sides sort their own scrambled copy (`checker.oracle.sides.cases`) with the
same deps and compares the orders by node names; an order is wrong if a node precedes a
dependency or the output is not last. `split_case` has both sides split the graph under one
partition policy and compares the results by meaning; both refusing (raising) agrees. A side's
output is judged on its own (`checker.oracle.compare.judge`) when the two differ.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch
import torch.fx

from checker.oracle.compare.canon import (
    canonical_graph,
    first_difference,
    only_order_differs,
    order_faults,
)
from checker.oracle.compare.divergence import Blame, Divergence, Kind, broke, divergence
from checker.oracle.compare.judge import (
    Judgement,
    attempt,
    blame,
    compare_runs,
    judge_transformation,
)
from checker.oracle.compare.meaning import same_output
from checker.oracle.compare.model_level import Subject
from checker.oracle.protocol import Sorts, Splits
from checker.oracle.sides.cases import SCRAMBLES, SplitCase, sort_input, split_with
from checker.oracle.sides.contract import ContractError, same_nodes, split_output
from checker.oracle.sides.sides import Component, Sides
from reference.errors import FxOracleError, describe


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
        return [broke(sides, Component.SORT, results[1], scramble)]
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
    return [divergence(sides, Component.SORT, kind, found, detail, scramble, error)]


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
        return [broke(sides, Component.SPLIT, outs[1], str(case))]
    return _split_divergence(outs, gm, inputs, sides, case)


def _split_divergence(
    outs: list[Any], gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides,
    case: SplitCase,
) -> list[Divergence]:  # fmt: skip
    ours, theirs = outs
    if isinstance(ours, Exception) and not isinstance(ours, FxOracleError):
        detail = f"reference raised {describe(ours)}"
        return [divergence(sides, Component.SPLIT, Kind.CRASH, Blame.REFERENCE, detail, str(case))]
    if isinstance(ours, Exception) and isinstance(theirs, Exception):
        return []  # both refuse
    if not isinstance(ours, Exception) and not isinstance(theirs, Exception):
        if same_output(ours, theirs, sides.strict_order):
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
    return [divergence(sides, Component.SPLIT, kind, found, detail, str(case), error)]


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
    return [divergence(sides, Component.SPLIT, Kind.GRAPH, found, detail, str(case))]
