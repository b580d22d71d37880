"""Judging each side's output on its own, and blaming the wrong one (spec chapter 08, DIF-4).

`judge_transformation(original, transformed, inputs, extra_deps)` says whether an output is
`right`, `wrong` or `unknown` as a `Judgement` with its reason: first by execution (the
checker's one run-and-compare, `checker.proof.runs`: outputs, inputs after the call,
requires_grad flags and grad mode must match the original's, within the CHK-16 tolerance), then
by `checker.proof.check.check_transformation`. A run that shows a
difference is concrete evidence; a checker violation alone is not (`Judgement.concrete`), which
`blame` weighs when both sides are wrong. `attempt` runs a side without ever raising.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

import torch
import torch.fx

from checker.io.user_code import time_limit
from checker.oracle.compare.divergence import (
    NO_EVIDENCE,
    Blame,
    Blamed,
    Evidence,
    Raised,
    RunFault,
    told,
)
from checker.oracle.compare.obligations import first_violation
from checker.oracle.sides.contract import ContractError
from checker.proof import runs
from checker.proof.check import check_transformation
from checker.proof.number_inputs import input_sets
from checker.proof.on_cpu import moved_to_cpu
from checker.proof.verdict import Holds, Unknown
from reference.errors import FxOracleError, describe

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Failure:
    """What a side raised instead of returning a result (a side never stops the diff)."""

    error: Exception

    @property
    def broke_contract(self) -> bool:
        """A plug-in's result broke the contract: a `contract` divergence (DIF-12)."""
        return isinstance(self.error, ContractError)

    @property
    def unsupported(self) -> bool:
        """The side said the case is outside what it supports (DIF-1)."""
        return isinstance(self.error, NotImplementedError)

    @property
    def refused(self) -> bool:
        """The reference refused bad input (`FxOracleError`)."""
        return isinstance(self.error, FxOracleError)

    @property
    def raised(self) -> Raised:
        return Raised.of(self.error)

    def __str__(self) -> str:
        return f"raised {told(self.error)}"


def attempt(run: Callable[[], T]) -> T | Failure:
    """`run()`, or the `Failure` it raised (`TimeLimit` past `--time-limit`, FIL-11)."""
    try:
        with time_limit("the call"):
            return run()
    except Exception as e:
        return Failure(e)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One side's output: `right` (runs like the original and every check holds), `wrong`
    (a different result, a crash, a fault, or a violated check) or `unknown`, with the
    reason. `concrete` marks a wrong verdict shown by a run or a structural fact, as opposed
    to a checker violation alone (DIF-4)."""

    verdict: Literal["right", "wrong", "unknown"]
    reason: str
    concrete: bool = True
    evidence: Evidence = NO_EVIDENCE

    @property
    def wrong(self) -> bool:
        return self.verdict == "wrong"

    @property
    def right(self) -> bool:
        return self.verdict == "right"

    @staticmethod
    def of_fault(fault: object, evidence: Evidence = NO_EVIDENCE) -> Judgement:
        """Wrong with `fault` (its text is the reason), or right when there is none."""
        return Judgement("wrong", str(fault), evidence=evidence) if fault else RIGHT

    @staticmethod
    def of_failure(failure: Failure) -> Judgement:
        """Wrong: the side raised instead of giving an output."""
        return Judgement("wrong", str(failure), evidence=Evidence(raised=failure.raised))

    def labelled(self, label: str) -> Judgement:
        """The same judgement, its reason prefixed with the run that shows it."""
        return replace(self, reason=f"{label}: {self.reason}")


RIGHT = Judgement("right", "")


def judge_transformation(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule | Failure,
    inputs: tuple[Any, ...],
    extra_deps: Mapping[torch.fx.Node, Sequence[torch.fx.Node]] | None,
    grad_probes: bool = False,
) -> Judgement:
    """Execution against the original, then `check_transformation` (DIF-4). `grad_probes`
    adds the runs of `probes`; not for Dynamo-level passes, whose graphs are specialized to
    the inputs' requires_grad and the caller's grad mode (invoke_subgraph reads them from its
    body's metadata)."""
    if isinstance(transformed, Failure):
        return Judgement.of_failure(transformed)
    runs = probes(original, inputs) if grad_probes else [("example inputs", inputs, True)]
    for label, probe, caller_grad in runs:
        ran = compare_runs(original, transformed, probe, caller_grad)
        # a probe the original cannot run (an in-place update of a leaf that requires grad)
        # is skipped; on the example inputs it makes the verdict unknown
        if ran is not None and (ran.wrong or probe is inputs):
            return ran.labelled(label)
    return judge_obligations(original, transformed, inputs, extra_deps)


def judge_obligations(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    inputs: tuple[Any, ...],
    extra_deps: Mapping[torch.fx.Node, Sequence[torch.fx.Node]] | None,
) -> Judgement:
    """The checker's obligations (CHK-1..CHK-18, `check_transformation`) on `transformed`:
    wrong with the first violation's most specific id, its cause and spec line (DIF-27)."""
    report = check_transformation(original, transformed, inputs, extra_deps=extra_deps)
    violation = first_violation(report)
    if violation is not None:
        return Judgement("wrong", violation.reason(), False, Evidence(violated=violation.id))
    if report.unknowns:
        return Judgement("unknown", f"{report.unknowns[0].id} unknown")
    return RIGHT


def probes(
    original: torch.fx.GraphModule, inputs: tuple[Any, ...]
) -> list[tuple[str, tuple[Any, ...], bool]]:
    """The runs that judge an output: the example inputs; with a grad-mode switch in the graph
    also floating inputs that require grad, called with grad on and with grad off (DIF-4)."""
    runs = [("example inputs", inputs, True)]
    if any(n.target is torch._C._set_grad_enabled for n in original.graph.nodes):
        grads = tuple(
            t.detach().clone().requires_grad_(True)
            if isinstance(t, torch.Tensor) and t.is_floating_point() and not t.is_meta else t
            for t in inputs
        )  # fmt: skip
        runs += [("inputs requiring grad", grads, True), ("called under no_grad", grads, False)]
    return runs


def compare_runs(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    inputs: tuple[Any, ...],
    caller_grad: bool = True,
) -> Judgement | None:
    """None when both modules do the same on the same inputs (the checker's run-and-compare,
    `checker.proof.runs`: outputs, inputs after the call, `requires_grad` flags, grad mode, the
    CHK-16 tolerance); else why not (unknown if the original fails). A graph on CUDA without a
    CUDA device, or captured on fake inputs, runs on the CPU on inputs built from its
    metadata, as CHK-6 does."""
    found = attempt(lambda: input_sets(original, inputs))
    if isinstance(found, Failure):
        return Judgement("unknown", f"no inputs to run on: {describe(found.error)}")
    if found.on_cpu:
        original, transformed = moved_to_cpu(original), moved_to_cpu(transformed)
    verdict = runs.compare_runs(original, transformed, found.sets[0][1], "", caller_grad)
    if isinstance(verdict, Holds):
        return None
    if isinstance(verdict, Unknown):
        return Judgement("unknown", "the original does not run: " + _after_id(verdict.reason))
    return _ran_differently(_after_id(verdict.witness))


def _ran_differently(witness: str) -> Judgement:
    """Wrong, from the witness of the checker's run-and-compare, which is text: told as a
    side's crash is when the output raised, else "numbers differ"; what differs (values, or
    `requires_grad` and the grad mode) becomes its evidence here, where the text enters."""
    raised = witness.removeprefix("the transformed module raised ")
    if raised != witness:
        return Judgement(
            "wrong", f"raised {raised}", evidence=Evidence(raised=Raised.described(raised))
        )
    grad = "requires_grad " in witness or witness.startswith("grad mode ")
    run = RunFault.GRAD if grad else RunFault.VALUES
    return Judgement("wrong", f"numbers differ: {witness}", evidence=Evidence(run=run))


def _after_id(text: str) -> str:
    """A verdict's text without its obligation id: `CHK-6: output 0 ...` -> `output 0 ...`."""
    return text.split(": ", 1)[1].strip() if text.startswith("CHK-") else text.strip()


def blame(ours: Judgement, theirs: Judgement, label: str, difference: str) -> Blamed:
    """The blame from both sides' judgements (DIF-4)."""
    if ours.wrong and not theirs.wrong:
        return Blamed(Blame.REFERENCE, f"{difference}; reference: {ours.reason}", ours.evidence)
    if theirs.wrong and not ours.wrong:
        return Blamed(Blame.OTHER, f"{difference}; {label}: {theirs.reason}", theirs.evidence)
    if ours.wrong and ours.concrete != theirs.concrete:  # a run outweighs a checker verdict
        side, j, other = (
            (Blame.REFERENCE, ours, theirs) if ours.concrete else (Blame.OTHER, theirs, ours)
        )
        name = "reference" if side is Blame.REFERENCE else label
        detail = f"{difference}; {name}: {j.reason} (other side: {other.reason})"
        return Blamed(side, detail, j.evidence)
    if ours.wrong:
        detail = f"{difference}; both wrong: {ours.reason} / {theirs.reason}"
        return Blamed(Blame.BOTH, detail, theirs.evidence)
    if ours.right and theirs.right:
        return Blamed(Blame.NEITHER, f"{difference}; both correct")
    reasons = "; ".join(r for r in (ours.reason, theirs.reason) if r)
    return Blamed(Blame.UNKNOWN, f"{difference}; {reasons}")


def free_choice(difference: str, why: str, evidence: Evidence = NO_EVIDENCE) -> Blamed:
    """Both sides right: a free choice, `neither` to blame, with why the two differ (DIF-25)."""
    assert why, "DIF-25: a free choice says why both are right"
    return Blamed(Blame.NEITHER, f"{difference}; both correct; {why}", evidence)
