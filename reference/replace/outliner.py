"""The pass over one region group (spec chapter 03, RPL): `outline_group` plans the subgraph
(`plan`), asks the rules in `Refusal`'s order (`legality`'s, the gate hook's, RPL-25's `cycle`),
installs the subgraph and replaces each accepted region by a call (`region`). It answers with a
frozen `GroupOutcome`; `DedupResult.of` joins them. `reference.pipeline` sets up the `Outlining`
(the policy is read there, nowhere below), runs every group and sorts the graph after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import torch
import torch.fx

from reference.fx_helpers import attribute
from reference.replace.cycle import Contraction
from reference.replace.legality import (
    OutlineContext,
    Refusal,
    Ruling,
    Veto,
    group_veto,
    region_veto,
    veto,
)
from reference.replace.plan import Group, OutlinePlan, Region, build_subgraph, plan_outline
from reference.replace.region import Redirect, replace_region
from reference.replace.values import with_values

Node = torch.fx.Node
Gate = Callable[[Group, OutlinePlan], Ruling]  # RPL-11: HOLDS, or a Veto naming its region


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
class GroupOutcome:
    """What became of one group: the subgraph installed for it (none when no region was
    replaced), its replaced regions and its refused ones, in the order they were decided."""

    subgraphs: Mapping[str, torch.fx.GraphModule] = field(default_factory=dict)
    replaced: tuple[Replaced, ...] = ()
    refused: tuple[Refused, ...] = ()


@dataclass(frozen=True, slots=True)
class DedupResult:
    """What `deduplicate` did: subgraphs by name, replaced and refused regions, extra deps."""

    subgraphs: Mapping[str, torch.fx.GraphModule]
    replaced: tuple[Replaced, ...]
    refused: tuple[Refused, ...]
    extra_deps: Mapping[Node, tuple[Node, ...]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, outcomes: Iterable[GroupOutcome], extra_deps: Mapping[Node, tuple[Node, ...]]
    ) -> DedupResult:
        """Every group's outcome, in group order."""
        done = list(outcomes)
        subgraphs = {name: gm for o in done for name, gm in o.subgraphs.items()}
        replaced = tuple(r for o in done for r in o.replaced)
        return cls(subgraphs, replaced, tuple(r for o in done for r in o.refused), extra_deps)


class Installer(Protocol):
    """Where outlined subgraphs go. `root` holds the attributes a subgraph's own `get_attr`s
    read; `install(sub_gm)` registers it and returns the name it got."""

    @property
    def root(self) -> torch.nn.Module | dict[str, Any]: ...

    def install(self, sub_gm: torch.fx.GraphModule) -> str: ...


class ModuleInstaller:
    """Subgraphs registered on a graph module as `subgraph_<i>`, the first names the module does
    not have (RPL-1). Names only get taken, so the search resumes where the last one ended:
    asking from 0 each time made a 1,056-group graph's installs quadratic (`make bench`)."""

    def __init__(self, root: torch.fx.GraphModule) -> None:
        self.root = root
        self._next = 0

    def install(self, sub_gm: torch.fx.GraphModule) -> str:
        while hasattr(self.root, f"subgraph_{self._next}"):
            self._next += 1
        name = f"subgraph_{self._next}"
        self.root.register_module(name, sub_gm)
        return name


@dataclass(frozen=True, slots=True)
class Outlining:
    """What every group reads and updates: where subgraphs go, what the rules read (the alias DB,
    pins, take-overs, dead nodes), how an erased node's ordering deps move (SRT-9, SRT-10), the
    regions contracted so far (RPL-25; None: torch's rule, no cycle refusal) and the gate."""

    graph: torch.fx.Graph
    installer: Installer
    context: OutlineContext
    redirect: Redirect
    cycles: Contraction | None = None
    gate: Gate | None = None


def outline_group(run: Outlining, index: int, found: Group) -> GroupOutcome:
    """Plan the subgraph, ask the rules in `Refusal`'s order, install the subgraph and replace
    every accepted region by a call. `found` is the group as the tracker found it; `now`, as it
    is after earlier calls took over some of its nodes (RPL-17)."""
    refused = partial(_refused, index, found)
    now = [run.context.now(r) for r in found]
    plan = plan_outline(now, run.context.dead)
    veto = _taken_over(run, found[0], plan)  # RPL-17: the subgraph's own nodes are gone
    if isinstance(veto, Veto):
        return GroupOutcome(refused=(refused(0, veto),))
    veto = group_veto(now, plan)  # RPL-5, RPL-23, then the gate (RPL-11): nothing installed
    if not isinstance(veto, Veto) and run.gate is not None:
        veto = run.gate(now, plan)
    if isinstance(veto, Veto):
        return GroupOutcome(refused=(refused(veto.region, veto),))
    resolve = partial(attribute, run.installer.root)
    rulings = [region_veto(r, now, plan, run.context, resolve) for r in now]
    vetoes = [refused(k, v) for k, v in enumerate(rulings) if isinstance(v, Veto)]
    accepted = [k for k, v in enumerate(rulings) if not isinstance(v, Veto)]
    cycle = run.cycles.cycle([found[k] for k in accepted]) if run.cycles and accepted else None
    if cycle is not None:
        vetoes.append(refused(accepted[cycle.region], Veto(Refusal.CYCLE, f"cycle {cycle.path}")))
    if not accepted or cycle is not None:
        return GroupOutcome(refused=tuple(vetoes))  # RPL-5: nothing calls it, none installed
    return _replace_accepted(run, index, found, now[0], plan, accepted, vetoes)


def _taken_over(run: Outlining, region: Region, plan: OutlinePlan) -> Ruling:
    return veto(Refusal.TAKEN_OVER, run.context.taken_over(region, plan))


def _replace_accepted(
    run: Outlining,
    index: int,
    found: Group,
    representative: Region,
    plan: OutlinePlan,
    accepted: Sequence[int],
    refused: list[Refused],
) -> GroupOutcome:
    """Install the subgraph built from `representative` (region 0 as it is now), fetched by a
    `get_attr` at the top (RPL-1), and replace each accepted region of `found` not taken over
    meanwhile by a call of it (RPL-12, RPL-17)."""
    sub = build_subgraph(representative, plan)
    with_values(sub, representative)  # RPL-22
    sub_gm = torch.fx.GraphModule(run.installer.root, sub)
    name = run.installer.install(sub_gm)
    with run.graph.inserting_before():
        fetch = run.graph.create_node("get_attr", name, (), {})
    run.context.db.add_node(fetch)
    replaced: list[Replaced] = []
    for k in accepted:
        veto = _taken_over(run, found[k], plan)  # a call of this group took one of them
        if isinstance(veto, Veto):
            refused.append(_refused(index, found, k, veto))
            continue
        now = run.context.now(found[k])
        nodes, taken = run.context.names(now)  # RPL-17: named as found
        invoke, erased = replace_region(now, plan, fetch, run.context, run.redirect)
        if run.cycles is not None:
            run.cycles.replaced(erased)
        replaced.append(Replaced(index, k, name, invoke.name, nodes, taken))
    return GroupOutcome({name: sub_gm}, tuple(replaced), tuple(refused))


def _refused(index: int, found: Group, k: int | None, veto: Veto) -> Refused:
    return Refused(index, k, tuple(n.name for n in found[k or 0]), veto.rule, veto.detail)
