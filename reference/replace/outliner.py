"""Outlining, one region group at a time (spec chapter 03, RPL): `Outliner.outline_group` plans the
subgraph (`plan`), asks for the first refusal (`legality`'s rules on the whole group, the gate hook,
`legality`'s rules on each region, then RPL-25's `contraction`), builds and installs the subgraph
and replaces each accepted region by a call (`replace`), keeping the alias DB and the ordering
dependencies up to date. What it did is a `DedupResult`. `reference.pipeline` drives it over every
group and sorts the graph after."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import torch
import torch.fx

from reference.fx_helpers import attribute
from reference.policy import Policy
from reference.replace.cycle import Contraction
from reference.replace.legality import OutlineContext, Refusal, group_refusal, region_refusal
from reference.replace.plan import OutlinePlan, build_subgraph, plan_outline
from reference.replace.region import Call, replace_region
from reference.sort.deps import OrderingDeps

Node = torch.fx.Node
Group = Sequence[Sequence[Node]]  # the regions of one group, region 0 the representative
Gate = Callable[[Group, OutlinePlan], tuple[int, str] | None]


@dataclass(frozen=True, slots=True)
class Replaced:
    """Region `region` of group `group` is now the call `invoke` of `subgraph`."""

    group: int
    region: int
    subgraph: str
    invoke: str
    nodes: tuple[str, ...]
    taken: tuple[str, ...] = ()  # its flattened getitems an earlier call took over (RPL-17)


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


def _names(nodes: Iterable[Node]) -> tuple[str, ...]:
    return tuple(n.name for n in nodes)


class Outliner:
    """The state of one `outline` call: the graph, the installer, the context and ordering deps
    kept up to date, and what has been done."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        installer: Installer,
        context: OutlineContext,
        deps: OrderingDeps,
        gate: Gate | None,
        policy: Policy,
    ) -> None:
        self.graph, self.installer = graph, installer
        self.context, self.deps, self.gate, self.policy = context, deps, gate, policy
        self.contraction = Contraction(graph, deps.as_mapping()) if policy.refuse_cycles else None
        self.subgraphs: dict[str, torch.fx.GraphModule] = {}
        self.replaced: list[Replaced] = []
        self.refused: list[Refused] = []

    def result(self) -> DedupResult:
        """What was done so far, with the ordering dependencies as they are now."""
        return DedupResult(dict(self.subgraphs), tuple(self.replaced), tuple(self.refused),
                           self.deps.as_mapping())  # fmt: skip

    def outline_group(self, index: int, group: Sequence[Sequence[Node]]) -> None:
        """Plan the subgraph, find the first refusal (in `Refusal`'s order), build and install
        the subgraph, replace every accepted region by a call."""
        found, group = group, [self.context.now(r) for r in group]  # RPL-17
        plan = plan_outline(group, self.context.dead)
        if self._taken_over(index, 0, found[0], plan):
            return  # RPL-17: the representative is gone, so is the subgraph it defines
        if self._group_refused(index, group, plan):
            return  # RPL-5, RPL-23, RPL-11: nothing is installed for such a group
        accepted = self._accepted(index, group, plan)
        if not accepted or self._closes_cycle(index, found, accepted):
            self.installer.skip()
            return  # RPL-5: nothing calls it, so nothing is installed (the name stays used)
        call = self._install(build_subgraph(group[0], plan))
        for k in accepted:  # an earlier call of this group may have taken over from region k
            if not self._taken_over(index, k, found[k], plan):
                self.replace(index, k, self.context.now(found[k]), plan, call)

    def _group_refused(
        self, index: int, group: Sequence[Sequence[Node]], plan: OutlinePlan
    ) -> bool:
        """The rules on the whole group (RPL-5, RPL-23), then the gate hook (RPL-11)."""
        whole = group_refusal(group, plan)
        if whole is not None:
            self.refused.append(Refused(index, None, _names(group[0]), *whole))
            return True
        vetoed = self.gate(group, plan) if self.gate is not None else None
        if vetoed is not None:
            at, detail = vetoed
            self.refused.append(Refused(index, at, _names(group[at]), Refusal.GATE, detail))
        return vetoed is not None

    def _accepted(
        self, index: int, group: Sequence[Sequence[Node]], plan: OutlinePlan
    ) -> list[int]:
        """The regions no rule refuses; the others are recorded as refused."""
        resolve = partial(attribute, self.installer.root)
        accepted: list[int] = []
        for k, region in enumerate(group):
            why = region_refusal(region, group, plan, self.context, resolve)
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
        took = self.context.took_over  # RPL-17: name the nodes as found
        nodes = tuple(took.get(n, n).name for n in region)
        taken = tuple(took[n].name for n in region if n in took)
        state = (self.context, self.deps)
        invoke, erased = replace_region(self.graph, region, plan, call, state,
                                        policy=self.policy)  # fmt: skip
        if self.contraction is not None:
            self.contraction.replaced(erased)
        self.replaced.append(Replaced(index, k, call.name, invoke.name, nodes, taken))

    def _taken_over(self, index: int, k: int, region: Sequence[Node], plan: OutlinePlan) -> bool:
        """RPL-17: refuse region `k` (as found) when an earlier call (of this group or an
        earlier one) has replaced one of its nodes that the call would compute: a getitem on a
        tuple another region outputs that is not a flattened operand (RPL-4)."""
        gone = self.context.taken_over(region, plan)
        if gone is None:
            return False
        by = self.context.replaced_by[gone].args[0]
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
        self.context.db.add_node(fetch)
        return Call(fetch, name)
