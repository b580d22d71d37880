"""The partition plan of split_module, as plain data (spec chapter 05, SPL-1 to SPL-11, SPL-15).

`plan_split` decides everything `split_module` will build: which node goes to which partition,
each partition's inputs, outputs, global-state preludes and epilogues, and the order in which
the base graph calls the partitions. `build` then only turns the plan into graphs, so the
plan is what tests, the course (`checker/course/ex_04_05.py`) and the chapter 05 pictures
(`checker/tools/render/pictures.py`) inspect; `fxoracle explain` does not show it.

Phases, as in torch's `split_module`: assign (callback), regions (global state), record
cross-partition uses, order (torch's, repaired by `reference.split.repair` where it is wrong).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch.fx

from reference.fx_helpers import NodeIndex
from reference.split.graph import (
    NodeKind,
    PartitionId,
    SplitGraph,
    assign_partitions,
    read_graph,
)
from reference.split.partition_order import cycle_error, lifo_order
from reference.split.repair import repaired_order
from reference.split.state import check_monotonic, epilogues, preludes, state_regions


@dataclass(frozen=True, slots=True)
class PartitionPlan:
    """One partition: its nodes and interface, all as node indices in the original graph.

    `inputs` become placeholders (first-use order), `module_attrs` are nn.Module get_attrs
    copied in after them (among them in `input_order`, both kinds in first-use order, before
    torch 2.13: SPL-4), `outputs` are returned in first-recorded-use order, `preludes` are
    state nodes re-run first, `epilogues` are autocast enters whose exit is re-run last, and
    `dependents` are the partitions that use this one's outputs, in recording order.
    """

    pid: PartitionId
    nodes: tuple[NodeIndex, ...]
    inputs: tuple[NodeIndex, ...]
    module_attrs: tuple[NodeIndex, ...]
    input_order: tuple[NodeIndex, ...]
    outputs: tuple[NodeIndex, ...]
    preludes: tuple[NodeIndex, ...]
    epilogues: tuple[NodeIndex, ...]
    dependents: tuple[PartitionId, ...]


@dataclass(frozen=True, slots=True)
class SplitPlan:
    """A whole split. `partitions` are in first-appearance order; `order` is the base graph's
    call order; `upstream_order` is the order torch would use (it differs in B6/B7)."""

    facts: SplitGraph
    assignment: tuple[PartitionId | None, ...]
    partitions: tuple[PartitionPlan, ...]
    order: tuple[PartitionId, ...]
    upstream_order: tuple[PartitionId, ...]

    def partition(self, pid: PartitionId) -> PartitionPlan:
        """The plan of partition `pid`."""
        for p in self.partitions:
            if p.pid == pid:
                return p
        raise KeyError(pid)


@dataclass(slots=True)
class _Uses:
    """Ordered sets (dicts with None values) filled while recording uses, then frozen."""

    inputs: dict[PartitionId, dict[NodeIndex, None]] = field(default_factory=dict)
    outputs: dict[PartitionId, dict[NodeIndex, None]] = field(default_factory=dict)
    dependents: dict[PartitionId, dict[PartitionId, None]] = field(default_factory=dict)


def plan_split(
    gm: torch.fx.GraphModule,
    split_callback: Callable[[torch.fx.Node], int],
    keep_original_order: bool = False,
) -> SplitPlan:
    """Plan the split of `gm`; the callback is called once per partitioned node (SPL-1)."""
    facts = read_graph(gm)
    return make_plan(facts, assign_partitions(gm, facts, split_callback), keep_original_order)


def make_plan(
    facts: SplitGraph,
    assignment: Sequence[PartitionId | None],
    keep_original_order: bool = False,
) -> SplitPlan:
    """The plan for a given assignment (`None` for unpartitioned nodes); pure."""
    assignment = tuple(assignment)
    regions = state_regions(facts, assignment)
    check_monotonic(facts, assignment)
    appearance = tuple(dict.fromkeys(p for p in assignment if p is not None))
    uses = _record_uses(facts, assignment)
    partitions = tuple(
        PartitionPlan(
            pid=pid,
            nodes=tuple(NodeIndex(i) for i, p in enumerate(assignment) if p == pid),
            inputs=_inputs_of(facts, uses, pid, modules=False),
            module_attrs=_inputs_of(facts, uses, pid, modules=True),
            input_order=tuple(uses.inputs.get(pid, {})),
            outputs=tuple(uses.outputs.get(pid, {})),
            preludes=preludes(regions, pid),
            epilogues=epilogues(regions, pid),
            dependents=tuple(uses.dependents.get(pid, {})),
        )
        for pid in appearance
    )
    upstream, order = _orders(facts, assignment, partitions, keep_original_order)
    return SplitPlan(facts, assignment, partitions, order, upstream)


def _inputs_of(
    facts: SplitGraph, uses: _Uses, pid: PartitionId, modules: bool
) -> tuple[NodeIndex, ...]:
    """The value inputs of `pid`, or its nn.Module get_attrs, in first-use order (SPL-4)."""
    inputs = uses.inputs.get(pid, {})
    return tuple(i for i in inputs if (facts.nodes[i].kind is NodeKind.MODULE_ATTR) == modules)


def _record_uses(facts: SplitGraph, assignment: Sequence[PartitionId | None]) -> _Uses:
    """Record every cross-partition use in node order, as torch does (SPL-3, SPL-6).

    Global-state nodes record nothing: their effect is carried by preludes (SPL-9). The output
    node's uses make outputs only.
    """
    uses = _Uses()
    for i, fact in enumerate(facts.nodes):
        use_pid = assignment[i]
        if fact.kind is NodeKind.OUTPUT:
            for d in fact.inputs:
                _record_use(facts, assignment, uses, d, None)
        elif use_pid is not None and fact.state is None:
            for d in fact.inputs:
                _record_use(facts, assignment, uses, d, use_pid)
    return uses


def _record_use(
    facts: SplitGraph,
    assignment: Sequence[PartitionId | None],
    uses: _Uses,
    def_index: NodeIndex,
    use_pid: PartitionId | None,
) -> None:
    def_pid = assignment[def_index]
    if def_pid == use_pid:
        return
    if def_pid is not None:
        uses.outputs.setdefault(def_pid, {})[def_index] = None
        if use_pid is not None:
            uses.dependents.setdefault(def_pid, {})[use_pid] = None
    if use_pid is None:
        return
    uses.inputs.setdefault(use_pid, {})[def_index] = None
    for symbol in facts.nodes[def_index].symbols:
        definer = symbol.definer
        # No binder (B9) or bound in the using partition itself: the partition has it already.
        if definer is None or assignment[definer] == use_pid:
            continue
        uses.inputs[use_pid][definer] = None
        s_pid = assignment[definer]
        if s_pid is not None and facts.nodes[definer].kind is not NodeKind.PLACEHOLDER:
            uses.outputs.setdefault(s_pid, {})[definer] = None
            uses.dependents.setdefault(s_pid, {})[use_pid] = None


def _orders(
    facts: SplitGraph,
    assignment: Sequence[PartitionId | None],
    partitions: Sequence[PartitionPlan],
    keep_original_order: bool,
) -> tuple[tuple[PartitionId, ...], tuple[PartitionId, ...]]:
    """(torch's order, the reference's): torch's is first appearance with `keep_original_order`,
    else its LIFO order, and a cycle is refused (SPL-7); the reference's is torch's where that is
    right, else repaired (`reference.split.repair`: SPL-8, SPL-11, SPL-15)."""
    appearance = tuple(p.pid for p in partitions)
    dependents = {p.pid: p.dependents for p in partitions}
    lifo = lifo_order(appearance, dependents)
    if lifo is None:
        raise cycle_error(appearance, [(p, d) for p in appearance for d in dependents[p]])
    starts = {p.pid: p.preludes for p in partitions}
    torch_lifo = None if keep_original_order else lifo
    order = repaired_order(facts, assignment, dependents, starts, torch_lifo)
    return (appearance if keep_original_order else lifo), order
