"""Deduplication: region groups become shared subgraphs called through `invoke_subgraph`
(spec chapter 03, RPL). This is the driver; `outline` plans and builds each subgraph,
`replace` substitutes each region, `deps`/`order` keep the graph's ordering constraints.

`deduplicate(gm, tracker)` edits `gm` in place, as torch's `apply_graph_deduplication` does,
and returns what it did as a `DedupResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
import torch.fx

from reference.bodies import resolver
from reference.deps import OrderingDeps, pinned_targets
from reference.errors import expect, expect_method
from reference.facts import ValueFacts
from reference.order import stable_topological_sort
from reference.outline import (
    OutlinePlan,
    build_subgraph,
    external_usages,
    plan_outline,
    unreturnable_output,
)
from reference.regions import RegionSearch, search_regions
from reference.replace import Reason, other_body, refusal, replace_region, wiring
from reference.tracker import GraphRegionTracker

Node = torch.fx.Node
Gate = Callable[[Sequence[Sequence[Node]], OutlinePlan], tuple[int, str] | None]


@dataclass(frozen=True, slots=True)
class Replaced:
    """Region `region` of group `group` is now the call `invoke` of `subgraph`."""

    group: int
    region: int
    subgraph: str
    invoke: str
    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Refused:
    """Region `region` of group `group` (all regions when `region` is None) stays as it was."""

    group: int
    region: int | None
    nodes: tuple[str, ...]
    reason: Reason
    detail: str

    @property
    def id(self) -> str:
        """The invariant that refuses the region (`RPL-7`)."""
        return self.reason.id


@dataclass(frozen=True, slots=True)
class DedupResult:
    """What `deduplicate` did: subgraphs by name, replaced and refused regions, extra deps."""

    subgraphs: Mapping[str, torch.fx.GraphModule]
    replaced: tuple[Replaced, ...]
    refused: tuple[Refused, ...]
    extra_deps: Mapping[Node, tuple[Node, ...]] = field(default_factory=dict)


def deduplicate(
    gm: torch.fx.GraphModule,
    tracker: GraphRegionTracker,
    gate: Gate | None = None,
    *,
    pin_grad_mode: bool = True,
    keep_erased_deps: bool = True,
    deps: OrderingDeps | None = None,
    search: RegionSearch | None = None,
) -> DedupResult:
    """Find `tracker`'s region groups in `gm` and outline them, in place (RPL-1..RPL-10).

    `gate(group, plan)` may veto a group before anything changes: it returns (region index,
    reason) for the first region it cannot prove safe, or None (RPL-11). `pin_grad_mode=False`
    orders like torch, which lets computation cross `_set_grad_enabled` (SRT-8);
    `keep_erased_deps=False` drops an erased node's own deps as torch does (SRT-10): both
    reproduce torch's node order, its wrong results included, for comparison only. `deps`,
    when given, must be `ordering_deps(gm.graph, mutations, pin_grad_mode)` (a gate built on
    the same object saves building it twice); it is updated in place. `search`, when given, is
    `search_regions(gm.graph, tracker.buckets())` done already (the regions are found once).
    """
    expect(gm, torch.fx.GraphModule, "deduplicate: gm")  # FIL-6
    expect_method(tracker, "buckets", "deduplicate: tracker")
    if search is None:
        search = search_regions(gm.graph, tracker.buckets())
    groups = search.region_groups()
    mutated = tracker.node_to_mutated_arg_positions
    return outline_groups(gm, groups, mutated, gate, pin_grad_mode=pin_grad_mode,
                          keep_erased_deps=keep_erased_deps, deps=deps)  # fmt: skip


def ordering_deps(
    graph: torch.fx.Graph, mutated: Mapping[Node, Iterable[int]], pin_grad_mode: bool = True
) -> OrderingDeps:
    """The extra ordering dependencies of `graph` (SRT-6..SRT-8), mutations of nodes no longer
    in the graph ignored."""
    present = set(graph.nodes)
    positions = {n: tuple(sorted(p)) for n, p in mutated.items() if n in present}
    return OrderingDeps.from_graph(graph, positions, pin_grad_mode=pin_grad_mode)


class Installer(Protocol):
    """Where outlined subgraphs go. `root` holds the attributes a subgraph's own `get_attr`s
    read; `install(sub_gm)` registers it and returns the name it got; `skip()` is told when a
    group's name would be taken although nothing is installed (torch installs it, RPL-5)."""

    @property
    def root(self) -> torch.nn.Module | dict[str, Any]: ...

    def install(self, sub_gm: torch.fx.GraphModule) -> str: ...

    def skip(self) -> None: ...


class ModuleInstaller:
    """Subgraphs registered on a graph module as `subgraph_<i>`, the first names neither on the
    module nor taken by an earlier group (RPL-1)."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        self._gm = gm
        self._next = 0

    @property
    def root(self) -> torch.nn.Module:
        return self._gm

    def install(self, sub_gm: torch.fx.GraphModule) -> str:
        name = self._name()
        self._gm.register_module(name, sub_gm)
        return name

    def skip(self) -> None:
        self._name()

    def _name(self) -> str:
        while hasattr(self._gm, f"subgraph_{self._next}"):
            self._next += 1  # names only get taken, so the first free one only moves up
        self._next += 1
        return f"subgraph_{self._next - 1}"


def outline_groups(
    gm: torch.fx.GraphModule,
    groups: Sequence[Sequence[Sequence[Node]]],
    mutated: Mapping[Node, Iterable[int]],
    gate: Gate | None = None,
    *,
    pin_grad_mode: bool = True,
    keep_erased_deps: bool = True,
    deps: OrderingDeps | None = None,
) -> DedupResult:
    """Outline each group of `groups` (torch's order) into `gm`, then sort once (SRT-1)."""
    found = outline(gm.graph, ModuleInstaller(gm), groups, mutated, gate,
                    pin_grad_mode=pin_grad_mode, keep_erased_deps=keep_erased_deps,
                    deps=deps)  # fmt: skip
    gm.recompile()
    return found


def outline(
    graph: torch.fx.Graph,
    installer: Installer,
    groups: Sequence[Sequence[Sequence[Node]]],
    mutated: Mapping[Node, Iterable[int]],
    gate: Gate | None = None,
    *,
    pin_grad_mode: bool = True,
    keep_erased_deps: bool = True,
    deps: OrderingDeps | None = None,
) -> DedupResult:
    """`outline_groups` on a bare graph, the subgraphs going to `installer` (chapter 03)."""
    if deps is None:
        deps = ordering_deps(graph, mutated, pin_grad_mode)
    pinned = pinned_targets(pin_grad_mode)
    run = _Run(graph, installer, ValueFacts(graph, mutated, pinned), deps, gate, keep_erased_deps)
    for index, group in enumerate(groups):
        run.outline_group(index, group)
    stable_topological_sort(graph, deps.as_mapping())
    graph.lint()
    return DedupResult(dict(run.subgraphs), tuple(run.replaced), tuple(run.refused),
                       deps.as_mapping())  # fmt: skip


def _names(nodes: Iterable[Node]) -> tuple[str, ...]:
    return tuple(n.name for n in nodes)


class _Run:
    """The state of one `outline` call: the graph, the installer and what has been done."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        installer: Installer,
        facts: ValueFacts,
        deps: OrderingDeps,
        gate: Gate | None,
        inherit: bool,
    ) -> None:
        self.graph, self.installer = graph, installer
        self.facts, self.deps, self.gate = facts, deps, gate
        self.inherit = inherit  # SRT-10: an erased node's own deps move to its replacement
        self.subgraphs: dict[str, torch.fx.GraphModule] = {}
        self.replaced: list[Replaced] = []
        self.refused: list[Refused] = []

    def outline_group(self, index: int, group: Sequence[Sequence[Node]]) -> None:
        """Plan, build and install the subgraph, then replace every region that may be."""
        if self._taken_over(index, 0, group[0]):
            return  # RPL-17: the representative is gone, so is the subgraph it defines
        if not external_usages(group[0]):
            self.refused.append(Refused(index, None, _names(group[0]), Reason.NO_INPUTS, ""))
            return  # RPL-5: torch installs nothing for such a group
        plan = plan_outline(group)
        unreturnable = unreturnable_output(group[0], plan)
        if unreturnable:
            self.refused.append(Refused(index, None, _names(group[0]), Reason.OUTPUT, unreturnable))
            return  # RPL-23: no region of the group can be called
        vetoed = self.gate(group, plan) if self.gate is not None else None
        if vetoed is not None:
            at, detail = vetoed
            self.refused.append(Refused(index, at, _names(group[at]), Reason.GATE, detail))
            return
        reference = wiring(group[0])
        resolve = resolver(self.installer.root)
        verdicts = [
            other_body(region, group[0], plan, resolve)
            or refusal(region, plan, reference, self.facts)
            for region in group
        ]
        for k, why in enumerate(verdicts):
            if why is not None:
                self.refused.append(Refused(index, k, _names(group[k]), why[0], why[1]))
        if all(why is not None for why in verdicts):
            self.installer.skip()
            return  # RPL-5: nothing calls it, so nothing is installed (the name stays used)
        call = self._install(build_subgraph(group[0], plan))
        for k, region in enumerate(group):
            if verdicts[k] is None and not self._taken_over(index, k, region):
                nodes = _names(region)
                invoke = replace_region(self.graph, region, plan, call, self.facts,
                                        self.deps, inherit=self.inherit)  # fmt: skip
                self.replaced.append(Replaced(index, k, call[1], invoke.name, nodes))

    def _taken_over(self, index: int, k: int, region: Sequence[Node]) -> bool:
        """RPL-17: refuse region `k` when an earlier call (of this group or an earlier one)
        has replaced one of its nodes: a getitem on a tuple another region outputs."""
        gone = self.facts.taken_over(region)
        if gone is None:
            return False
        by = self.facts.replaced_by[gone].args[0]
        assert isinstance(by, Node), "RPL-12: a take-over getitem reads its call"
        detail = f"{gone.name} is now a getitem of {by.name}"
        self.refused.append(Refused(index, k, _names(region), Reason.TAKEN_OVER, detail))
        return True

    def _install(self, subgraph: torch.fx.Graph) -> tuple[Node, str]:
        """Install the subgraph and fetch it with a get_attr at the top (RPL-1)."""
        sub_gm = torch.fx.GraphModule(self.installer.root, subgraph)
        name = self.installer.install(sub_gm)
        self.subgraphs[name] = sub_gm
        with self.graph.inserting_before():
            return self.graph.create_node("get_attr", name, (), {}), name
