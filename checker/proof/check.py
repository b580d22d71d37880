"""`check_transformation`: translation validation of one graph transformation that outlines
regions into `invoke_subgraph` calls or splits a graph into submodules (spec chapter 06, CHK).

Nothing of the transformation is trusted: not its region groups, not its dependency map, not
its names. Each obligation is checked on its own and gets a three-state verdict:

  CHK-1 well-formed      lint, arity, operands, getitem range, identifiers, no body that
                         mutates its inputs (CHK-15), no call whose operands or results
                         share storage (CHK-18), no later write of an operand a call saves
                         for backward (CHK-22)               (wellformed.py, call_aliasing.py)
  CHK-2 acyclic          data and extra dependencies, networkx            (acyclic.py)
  CHK-3 dataflow         inline every call, pair the nodes with the original (inline.py,
  CHK-4 ordering         the original's ordering dependencies, flat order   dependencies.py)
  CHK-5 shapes           operands vs callee signature, z3                 (shapes/check.py)
  CHK-6 numbers          both modules on the example inputs, call bodies run (numeric.py)
  CHK-17 runtime         the transformed module through torch's runtime   (numeric.py)

A failure inside one obligation becomes `Unknown` with the exception's one-line description
(`reference.errors.describe`, CHK-9): `check_transformation` never raises on a pair of graph
modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import torch
import torch.fx

from checker.proof.acyclic import check_acyclic
from checker.proof.dependencies import Matching, check_ordering, match_graphs
from checker.proof.flat import FlatGraph, flatten
from checker.proof.number_inputs import inputs_or_why
from checker.proof.numeric import check_numbers, check_runtime
from checker.proof.report import (
    ACYCLIC,
    DATAFLOW,
    NUMBERS,
    ORDERING,
    RUNTIME,
    SHAPES,
    WELL_FORMED,
    CheckId,
    Report,
    obligation,
)
from checker.proof.shapes.check import check_call_shapes, facts_of
from checker.proof.verdict import Unknown, Verdict
from checker.proof.wellformed import check_wellformed
from reference.arguments import expect
from reference.errors import FxOracleError, describe

Node = torch.fx.Node
T = TypeVar("T")


def check_transformation(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    example_inputs: Sequence[Any] | None = None,
    *,
    extra_deps: Mapping[Node, Sequence[Node]] | None = None,
    timeout_ms: int = 2000,
) -> Report:
    """Check that `transformed` computes what `original` computes (CHK-1 to CHK-6).

    `extra_deps` (`node -> nodes it must follow`, nodes of `transformed`) join the acyclicity
    check; `example_inputs`, when given, replace the random inputs of the numbers check.
    Raises `FxOracleError` only when an argument is not a graph module, the inputs are not a
    tuple or list, or the timeout is not positive (FIL-6).
    """
    for name, gm in (("original", original), ("transformed", transformed)):
        if not isinstance(gm, torch.fx.GraphModule):
            raise FxOracleError(f"{name} must be a torch.fx.GraphModule, got {type(gm).__name__}")
    if timeout_ms <= 0:
        raise FxOracleError(f"timeout_ms must be positive, got {timeout_ms}")
    expect(example_inputs, (tuple, list, type(None)), "check_transformation: example_inputs")
    flat = _guarded(lambda: _flatten_both(original, transformed))
    inputs = _once(lambda: inputs_or_why(original, example_inputs))
    matching = flat if isinstance(flat, Unknown) else _guarded(lambda: match_graphs(*flat))
    checks: list[tuple[CheckId, Callable[[], Verdict]]] = [
        (WELL_FORMED, lambda: check_wellformed(transformed)),
        (ACYCLIC, lambda: check_acyclic(transformed, extra_deps)),
        (DATAFLOW, lambda: _dataflow(matching)),
        (ORDERING, lambda: _ordering(original, flat, matching)),
        (SHAPES, lambda: _shapes(original, transformed, timeout_ms)),
        (NUMBERS, lambda: check_numbers(original, transformed, inputs())),
        (RUNTIME, lambda: check_runtime(original, transformed, inputs())),
    ]
    return Report(tuple(obligation(check, _verdict(check, run)) for check, run in checks))


def _flatten_both(
    original: torch.fx.GraphModule, transformed: torch.fx.GraphModule
) -> tuple[FlatGraph, FlatGraph]:
    return flatten(original), flatten(transformed)


def _dataflow(matching: Matching | Unknown) -> Verdict:
    return matching if isinstance(matching, Unknown) else matching.verdict


def _ordering(
    original: torch.fx.GraphModule,
    flat: tuple[FlatGraph, FlatGraph] | Unknown,
    matching: Matching | Unknown,
) -> Verdict:
    if isinstance(flat, Unknown):
        return flat
    if isinstance(matching, Unknown):
        return matching
    return check_ordering(original, flat, matching.pairs)


def _shapes(
    original: torch.fx.GraphModule, transformed: torch.fx.GraphModule, timeout_ms: int
) -> Verdict:
    facts = facts_of([original, transformed])
    return check_call_shapes(transformed, facts, timeout_ms)


def _once(make: Callable[[], T]) -> Callable[[], T]:
    """`make()`, computed at the first call and kept."""
    kept: list[T] = []

    def get() -> T:
        if not kept:
            kept.append(make())
        return kept[0]

    return get


def _guarded(run: Callable[[], T]) -> T | Unknown:
    """`run()`, or Unknown with the exception's one-line description (CHK-9)."""
    try:
        return run()
    except Exception as e:  # an internal failure is unknown, never a pass and never a crash
        return Unknown(describe(e))


def _verdict(check: CheckId, run: Callable[[], Verdict]) -> Verdict:
    found = _guarded(run)
    if isinstance(found, Unknown) and not found.reason.startswith("CHK-"):
        return Unknown(f"{check}: {found.reason}")
    return found
