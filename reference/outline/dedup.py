"""Deduplication: region groups become shared subgraphs called through `invoke_subgraph`
(spec chapter 03, RPL). This is the driver: `outline` plans and builds each subgraph,
`legality` says which regions may be replaced, `replace` substitutes each one, `contraction`
keeps the result acyclic (RPL-25), `deps`/`order` keep the graph's ordering constraints.

`deduplicate(gm, tracker)` edits `gm` in place, as torch's `apply_graph_deduplication` does,
and returns what it did as a `DedupResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import torch
import torch.fx

from reference.effects.alias_db import AliasDB
from reference.errors import expect, expect_method
from reference.expand.regions import RegionSearch, search_regions
from reference.fx_helpers import attribute
from reference.key.tracker import GraphRegionTracker
from reference.order.deps import OrderingDeps, pinned_targets
from reference.order.sort import stable_topological_sort
from reference.outline.contraction import Contraction
from reference.outline.legality import Facts, Refusal, group_refusal, region_refusal
from reference.outline.plan import OutlinePlan, build_subgraph, plan_outline
from reference.outline.replace import Call, replace_region
from reference.policy import RIGHT, Policy

Node = torch.fx.Node
Gate = Callable[[Sequence[Sequence[Node]], OutlinePlan], tuple[int, str] | None]
Reason = Refusal  # the name earlier releases exported


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
    reason: Refusal
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
    policy: Policy = RIGHT,
    deps: OrderingDeps | None = None,
    search: RegionSearch | None = None,
) -> DedupResult:
    """Find `tracker`'s region groups in `gm` and outline them, in place (RPL-1..RPL-25).

    `gate(group, plan)` may veto a group before anything changes: it returns (region index,
    reason) for the first region it cannot prove safe, or None (RPL-11). A `policy` other than
    the default follows torch in some of its ordering rules (`reference.policy`), for
    comparison only. `deps`, when given, must be `ordering_deps(gm.graph, writes, policy)`
    (a gate built on the same object saves building it twice); it is updated in place.
    `search`, when given, is `search_regions(gm.graph, tracker.buckets())` done already.
    """
    expect(gm, torch.fx.GraphModule, "deduplicate: gm")  # FIL-6
    expect_method(tracker, "buckets", "deduplicate: tracker")
    if search is None:
        search = search_regions(gm.graph, tracker.buckets())
    groups = search.region_groups()
    writes = tracker.node_to_mutated_arg_positions
    return outline_groups(gm, groups, writes, gate, policy=policy, deps=deps)


def ordering_deps(
    graph: torch.fx.Graph, writes: Mapping[Node, Iterable[int]], policy: Policy = RIGHT
) -> OrderingDeps:
    """The extra ordering dependencies of `graph` (SRT-6..SRT-13), writes of nodes no longer
    in the graph ignored."""
    present = set(graph.nodes)
    positions = {n: tuple(sorted(p)) for n, p in writes.items() if n in present}
    return OrderingDeps.from_graph(graph, positions, policy=policy)


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
    writes: Mapping[Node, Iterable[int]],
    gate: Gate | None = None,
    *,
    policy: Policy = RIGHT,
    deps: OrderingDeps | None = None,
) -> DedupResult:
    """Outline each group of `groups` (torch's order) into `gm`, then sort once (SRT-1)."""
    found = outline(gm.graph, ModuleInstaller(gm), groups, writes, gate, policy=policy, deps=deps)
    gm.recompile()
    return found


def outline(
    graph: torch.fx.Graph,
    installer: Installer,
    groups: Sequence[Sequence[Sequence[Node]]],
    writes: Mapping[Node, Iterable[int]],
    gate: Gate | None = None,
    *,
    policy: Policy = RIGHT,
    deps: OrderingDeps | None = None,
) -> DedupResult:
    """`outline_groups` on a bare graph, the subgraphs going to `installer` (chapter 03)."""
    positions = {n: tuple(sorted(p)) for n, p in writes.items()}
    db = AliasDB(graph, positions)
    if deps is None:
        deps = OrderingDeps.from_graph(graph, _present(graph, positions), policy=policy, db=db)
    facts = Facts(graph, db, pinned_targets(policy))
    run = Outliner(graph, installer, facts, deps, gate, policy)
    for index, group in enumerate(groups):
        run.outline_group(index, group)
    stable_topological_sort(graph, deps.as_mapping())
    graph.lint()
    return DedupResult(dict(run.subgraphs), tuple(run.replaced), tuple(run.refused),
                       deps.as_mapping())  # fmt: skip


def _present(
    graph: torch.fx.Graph, writes: Mapping[Node, tuple[int, ...]]
) -> dict[Node, tuple[int, ...]]:
    present = set(graph.nodes)
    return {n: p for n, p in writes.items() if n in present}


def _names(nodes: Iterable[Node]) -> tuple[str, ...]:
    return tuple(n.name for n in nodes)


class Outliner:
    """The state of one `outline` call: the graph, the installer, the facts and ordering deps
    kept up to date, and what has been done."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        installer: Installer,
        facts: Facts,
        deps: OrderingDeps,
        gate: Gate | None,
        policy: Policy,
    ) -> None:
        self.graph, self.installer = graph, installer
        self.facts, self.deps, self.gate, self.policy = facts, deps, gate, policy
        self.contraction = Contraction(graph, deps.as_mapping()) if policy.refuse_cycles else None
        self.subgraphs: dict[str, torch.fx.GraphModule] = {}
        self.replaced: list[Replaced] = []
        self.refused: list[Refused] = []

    def outline_group(self, index: int, group: Sequence[Sequence[Node]]) -> None:
        """Plan, check, build and install the subgraph, then replace every region that may be."""
        if self._taken_over(index, 0, group[0]):
            return  # RPL-17: the representative is gone, so is the subgraph it defines
        plan = plan_outline(group)
        whole = group_refusal(group, plan)
        if whole is not None:
            self.refused.append(Refused(index, None, _names(group[0]), *whole))
            return  # RPL-5, RPL-23: torch installs nothing for such a group
        vetoed = self.gate(group, plan) if self.gate is not None else None
        if vetoed is not None:
            at, detail = vetoed
            self.refused.append(Refused(index, at, _names(group[at]), Refusal.GATE, detail))
            return
        accepted = self._accepted(index, group, plan)
        if not accepted or self._closes_cycle(index, group, accepted):
            self.installer.skip()
            return  # RPL-5: nothing calls it, so nothing is installed (the name stays used)
        call = self._install(build_subgraph(group[0], plan))
        for k in accepted:
            if not self._taken_over(index, k, group[k]):
                self.replace(index, k, group[k], plan, call)

    def _accepted(
        self, index: int, group: Sequence[Sequence[Node]], plan: OutlinePlan
    ) -> list[int]:
        """The regions no rule refuses; the others are recorded as refused."""
        resolve = partial(attribute, self.installer.root)
        accepted: list[int] = []
        for k, region in enumerate(group):
            why = region_refusal(region, group, plan, self.facts, resolve)
            if why is None:
                accepted.append(k)
            else:
                self.refused.append(Refused(index, k, _names(region), *why))
        return accepted

    def _closes_cycle(self, index: int, group: Sequence[Sequence[Node]], ks: list[int]) -> bool:
        """RPL-25: contracting the accepted regions (with those replaced before) must leave the
        dependency graph acyclic, or no order could run the calls; the group is refused."""
        if self.contraction is None:
            return False
        found = self.contraction.cycle([group[k] for k in ks])
        if found is None:
            return False
        at, path = found
        k = ks[at]
        self.refused.append(Refused(index, k, _names(group[k]), Refusal.CYCLE, f"cycle {path}"))
        return True

    def replace(
        self, index: int, k: int, region: Sequence[Node], plan: OutlinePlan, call: Call
    ) -> None:
        """Replace region `k` of group `index` by a call of `call` (RPL-12)."""
        nodes = _names(region)
        state = (self.facts, self.deps)
        invoke, erased = replace_region(self.graph, region, plan, call, state,
                                        inherit=self.policy.keep_erased_deps)  # fmt: skip
        if self.contraction is not None:
            self.contraction.replaced(erased)
        self.replaced.append(Replaced(index, k, call.name, invoke.name, nodes))

    def _taken_over(self, index: int, k: int, region: Sequence[Node]) -> bool:
        """RPL-17: refuse region `k` when an earlier call (of this group or an earlier one)
        has replaced one of its nodes: a getitem on a tuple another region outputs."""
        gone = self.facts.taken_over(region)
        if gone is None:
            return False
        by = self.facts.replaced_by[gone].args[0]
        assert isinstance(by, Node), "RPL-12: a take-over getitem reads its call"
        detail = f"{gone.name} is now a getitem of {by.name}"
        self.refused.append(Refused(index, k, _names(region), Refusal.TAKEN_OVER, detail))
        return True

    def _install(self, subgraph: torch.fx.Graph) -> Call:
        """Install the subgraph and fetch it with a get_attr at the top (RPL-1)."""
        sub_gm = torch.fx.GraphModule(self.installer.root, subgraph)
        name = self.installer.install(sub_gm)
        self.subgraphs[name] = sub_gm
        with self.graph.inserting_before():
            fetch = self.graph.create_node("get_attr", name, (), {})
        self.facts.db.add_node(fetch)
        return Call(fetch, name)
