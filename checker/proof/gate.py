"""The replacer's gate: before a region group is outlined, prove its shapes equal or veto it
(spec chapter 06, CHK-12).

`make_gate(gm)` returns the callable `deduplicate(gm, tracker, gate=...)` calls with each group
and its plan. It answers `HOLDS`, or refuses with a `Veto` naming the region and "CHK-12: reason",
unless it proves that corresponding nodes of all regions have equal dtype, device, symbolic
sizes and strides (z3 under the ShapeEnv facts); an unknown verdict refuses too. That the
replacement keeps the graph acyclic is the reference's own rule (RPL-25), and CHK-2 proves the
result acyclic.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.fx

from checker.io.reports import plural
from checker.proof.shapes.check import compare_values, facts_of
from checker.proof.shapes.prove import ShapeFacts
from checker.proof.verdict import HOLDS, Holds, Violated
from reference.fx_helpers import example_value
from reference.replace.legality import Refusal, Ruling, Veto
from reference.replace.plan import OutlinePlan

Node = torch.fx.Node
Group = Sequence[Sequence[Node]]


def make_gate(gm: torch.fx.GraphModule, *, timeout_ms: int = 2000) -> ReplacementGate:
    """The gate for `gm`: its ShapeEnv facts read once."""
    return ReplacementGate(facts_of([gm]), timeout_ms)


class ReplacementGate:
    """Callable as `gate(group, plan) -> HOLDS | Veto` (CHK-12)."""

    def __init__(self, facts: ShapeFacts, timeout_ms: int) -> None:
        self._facts, self._timeout_ms = facts, timeout_ms

    def __call__(self, group: Group, plan: OutlinePlan) -> Ruling:
        return shape_refusal(group, self._facts, self._timeout_ms)


def shape_refusal(group: Group, facts: ShapeFacts, timeout_ms: int) -> Ruling:
    """The first region whose nodes' shapes are not proved equal to region 0's (CHK-12)."""
    for k, region in enumerate(group[1:], start=1):
        if len(region) != len(group[0]):
            why = f"region {k} has {plural(len(region), 'node')}, region 0 {len(group[0])}"
            return Veto(Refusal.GATE, f"CHK-12: {why}", k)
        for node, reference in zip(region, group[0], strict=True):
            verdict = compare_values(
                example_value(node), example_value(reference), facts, timeout_ms
            )
            if isinstance(verdict, Holds):
                continue
            kind = "differ" if isinstance(verdict, Violated) else "are not proved equal"
            detail = verdict.witness if isinstance(verdict, Violated) else verdict.reason
            why = f"shapes of {node.name} and {reference.name} {kind}: {detail}"
            return Veto(Refusal.GATE, f"CHK-12: {why}", k)
    return HOLDS
