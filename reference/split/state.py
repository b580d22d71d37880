"""Global-state regions of a split: preludes, epilogues, monotonic ids (spec chapter 05, SPL).

A `_set_grad_enabled(b)` is in force from its node up to the next one; an `_enter_autocast` up
to its `_exit_autocast`. When such a region spans several partitions, each partition must set
the state up itself, because it runs as its own module: that is what preludes (a copy of the
state call at the start) and epilogues (a copy of the autocast exit at the end) do. Pure
functions over `SplitGraph` and a partition assignment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reference.errors import FxOracleError
from reference.fx_helpers import NodeIndex
from reference.split.graph import PartitionId, SplitGraph, StateOp


@dataclass(frozen=True, slots=True)
class StateRegion:
    """A global-state node and the sorted ids of the partitions its effect spans (SPL-9)."""

    node: NodeIndex
    op: StateOp
    partitions: tuple[PartitionId, ...]


def check_monotonic(facts: SplitGraph, assignment: Sequence[PartitionId | None]) -> None:
    """With global state, partition ids must not decrease in node order (SPL-10, B8)."""
    if all(n.state is None for n in facts.nodes):
        return
    highest: PartitionId | None = None
    for i, pid in enumerate(assignment):
        if pid is None:
            continue
        if highest is not None and highest > pid:
            raise FxOracleError(
                "autocast or set_grad_enabled require monotonically increasing partitions: "
                f"highest: {highest}, this node's: {pid} (node {facts.nodes[i].name})"
            )
        highest = pid


def state_regions(
    facts: SplitGraph, assignment: Sequence[PartitionId | None]
) -> tuple[StateRegion, ...]:
    """Autocast regions (in enter order), then grad regions (in node order), as torch.

    A grad region holds its node and every later partitioned node up to the next grad node; an
    autocast region holds its enter, every partitioned node while it is open, and its exit.
    """
    spans: dict[NodeIndex, set[PartitionId]] = {}
    open_autocasts: list[NodeIndex] = []
    grad: NodeIndex | None = None
    for i, (fact, pid) in enumerate(zip(facts.nodes, assignment, strict=True)):
        if pid is None:
            continue
        index = NodeIndex(i)
        if fact.state is StateOp.SET_GRAD:
            grad = index
            spans[grad] = set()
        elif fact.state is StateOp.ENTER_AUTOCAST:
            open_autocasts.append(index)
            spans[index] = set()
        elif fact.state is StateOp.EXIT_AUTOCAST:
            assert fact.closes is not None, "SPL-9: exit without enter"
            if fact.closes not in open_autocasts:
                raise FxOracleError(f"{fact.name}: closes an autocast that is not open")
            spans[fact.closes].add(pid)
            open_autocasts.remove(fact.closes)
        for region in [*open_autocasts, *([] if grad is None else [grad])]:
            spans[region].add(pid)
    if open_autocasts:
        raise FxOracleError("autocast must exit: " + facts.nodes[open_autocasts[0]].name)
    return _ordered_regions(facts, spans)


def _ordered_regions(
    facts: SplitGraph, spans: dict[NodeIndex, set[PartitionId]]
) -> tuple[StateRegion, ...]:
    """Autocast regions, then grad regions, each in node order."""
    return tuple(
        StateRegion(i, op, tuple(sorted(spans[i])))
        for op in (StateOp.ENTER_AUTOCAST, StateOp.SET_GRAD)
        for i in sorted(spans)
        if facts.nodes[i].state is op
    )


def preludes(regions: Sequence[StateRegion], pid: PartitionId) -> tuple[NodeIndex, ...]:
    """State nodes re-run at the start of `pid`: every region that spans it but not first."""
    return tuple(r.node for r in regions if pid in r.partitions[1:])


def epilogues(regions: Sequence[StateRegion], pid: PartitionId) -> tuple[NodeIndex, ...]:
    """Autocast enters whose exit is re-run at the end of `pid`, innermost first.

    Every partition of an autocast region but the last closes it, so autocast never leaks.
    """
    return tuple(
        r.node
        for r in reversed(regions)
        if r.op is StateOp.ENTER_AUTOCAST and pid in r.partitions[:-1]
    )
