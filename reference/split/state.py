"""Global-state regions of a split: preludes, epilogues, monotonic ids (spec chapter 05, SPL).

A `_set_grad_enabled(b)` is in force from its node up to the next one; an `_enter_autocast` up
to its `_exit_autocast`. When such a region spans several partitions, each partition must set
the state up itself, because it runs as its own module: that is what preludes (a copy of the
state call at the start) and epilogues (a copy of the autocast exit at the end) do. Pure
functions over `SplitGraph` and a partition assignment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def has_global_state(facts: SplitGraph) -> bool:
    """Whether any node is a grad-mode or autocast call."""
    return any(n.state is not None for n in facts.nodes)


def check_monotonic(facts: SplitGraph, assignment: Sequence[PartitionId | None]) -> None:
    """With global state, partition ids must not decrease in node order (SPL-10, B8)."""
    if not has_global_state(facts):
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
    autocast = [i for i in sorted(spans) if facts.nodes[i].state is StateOp.ENTER_AUTOCAST]
    grad = [i for i in sorted(spans) if facts.nodes[i].state is StateOp.SET_GRAD]
    return tuple(
        StateRegion(
            i,
            StateOp.ENTER_AUTOCAST if i in autocast else StateOp.SET_GRAD,
            tuple(sorted(spans[i])),
        )
        for i in [*autocast, *grad]
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


def state_partitions(
    facts: SplitGraph, assignment: Sequence[PartitionId | None]
) -> frozenset[PartitionId]:
    """Partitions that hold a global-state node of their own: they change the ambient state."""
    return frozenset(
        pid
        for fact, pid in zip(facts.nodes, assignment, strict=True)
        if pid is not None and fact.state is not None
    )


GradMode = bool | None  # None: the ambient mode the split module is called under


@dataclass(frozen=True, slots=True)
class GradContract:
    """What a partition needs of the grad mode when it starts, and what it leaves (SPL-11).

    A partition that sets the mode first (a prelude, or a grad node as its first node) needs
    nothing; any other needs `entry`, the mode in force before its first node in the original
    graph. A partition that runs a grad node (its own or a prelude) leaves `exit` behind.
    """

    needs_entry: bool
    entry: GradMode
    changes: bool
    exit: GradMode


def grad_contract(
    facts: SplitGraph, nodes: Sequence[NodeIndex], prelude: Sequence[NodeIndex]
) -> GradContract:
    """The grad-mode contract of a partition with these nodes and preludes."""
    grads = [i for i in prelude if facts.nodes[i].state is StateOp.SET_GRAD]
    grads += [i for i in nodes if facts.nodes[i].state is StateOp.SET_GRAD]
    before = [i for i in range(nodes[0]) if facts.nodes[i].state is StateOp.SET_GRAD]
    return GradContract(
        needs_entry=not grads or grads[0] not in (*prelude, nodes[0]),
        entry=facts.nodes[before[-1]].grad_enabled if before else None,
        changes=bool(grads),
        exit=facts.nodes[grads[-1]].grad_enabled if grads else None,
    )


def final_grad_mode(facts: SplitGraph) -> GradMode:
    """The grad mode the original graph leaves behind: its last grad node's, else ambient."""
    modes = [n.grad_enabled for n in facts.nodes if n.state is StateOp.SET_GRAD]
    return modes[-1] if modes else None


def keeps_grad_mode(
    order: Sequence[PartitionId], contracts: Mapping[PartitionId, GradContract], final: GradMode
) -> bool:
    """Whether, run in `order`, every partition starts under the grad mode it needs and the
    last leaves the mode the original graph leaves (`final`) (SPL-11).

    Autocast needs no such check: every partition opens and closes the autocast it uses.
    """
    mode: GradMode = None
    for pid in order:
        contract = contracts[pid]
        if contract.needs_entry and contract.entry != mode:
            return False
        if contract.changes:
            mode = contract.exit
    return mode == final
