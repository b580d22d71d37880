"""The pass over one region group (spec chapter 03, RPL): `outline_group` plans the subgraph
(`plan`), asks the rules in `Refusal`'s order (`legality`'s whole-group rules, the gate hook,
`legality`'s region rules, RPL-25's `cycle`), installs the subgraph and replaces each accepted
region by a call (`replace_region`, RPL-12). It answers with a frozen `GroupOutcome`;
`DedupResult.of` joins them. `reference.pipeline` sets up the `Outlining` (the policy is read
there, nowhere below), runs every group and sorts the graph after.

`replace_region` appends the call and its getitems, re-points every external use, erases the
region and the dead nodes reading it (RPL-27), moves the erased nodes' ordering dependencies
onto the call (SRT-9, SRT-10) and updates the alias DB in place (EFF-7).
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import torch
import torch.fx

from reference.fx_helpers import attribute
from reference.names import INVOKE
from reference.replace.context import Takeovers
from reference.replace.cycle import Contraction
from reference.replace.dead import dead_readers
from reference.replace.legality import (
    OutlineContext,
    Refusal,
    Ruling,
    Veto,
    group_veto,
    region_veto,
    veto,
)
from reference.replace.plan import (
    Group,
    OutlinePlan,
    Region,
    build_subgraph,
    getitem_users,
    is_tuple_node,
    operands,
    output_width,
    plan_outline,
    tuple_output_spec,
)
from reference.replace.values import set_call_value, with_values

Node = torch.fx.Node
Redirect = Callable[[Node, Node], None]  # an erased node's ordering deps move to its successor
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


@dataclass(slots=True)
class ModuleInstaller:
    """Subgraphs registered on a graph module as `subgraph_<i>`, the first names the module does
    not have (RPL-1). Names only get taken, so the search resumes where the last one ended:
    asking from 0 each time made a 1,056-group graph's installs quadratic (`make bench`)."""

    root: torch.fx.GraphModule
    _next: int = field(default=0, init=False)

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
    ruling = veto(Refusal.TAKEN_OVER, run.context.taken_over(found[0], plan))  # RPL-17
    if isinstance(ruling, Veto):  # the subgraph's own nodes are gone
        return GroupOutcome(refused=(refused(0, ruling),))
    ruling = group_veto(now, plan)  # RPL-5, RPL-23, then the gate (RPL-11): nothing installed
    if not isinstance(ruling, Veto) and run.gate is not None:
        ruling = run.gate(now, plan)
    if isinstance(ruling, Veto):
        return GroupOutcome(refused=(refused(ruling.region, ruling),))
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
        ruling = veto(Refusal.TAKEN_OVER, run.context.taken_over(found[k], plan))
        if isinstance(ruling, Veto):  # a call of this group took one of its nodes
            refused.append(_refused(index, found, k, ruling))
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


def replace_region(
    region: Region, plan: OutlinePlan, fetch: Node, context: OutlineContext, redirect: Redirect
) -> tuple[Node, list[Node]]:
    """Append `invoke_subgraph(fetch, name, *operands)`, `fetch` the subgraph's `get_attr` and
    `name` its target, re-point uses, erase the region; return the call and the nodes erased.
    `redirect(erased, to)` moves each erased node's ordering deps (SRT-9, SRT-10)."""
    graph = fetch.graph
    invoke = graph.create_node(
        "call_function", INVOKE, (fetch, str(fetch.target), *operands(region, plan)), {}
    )
    takeovers: Takeovers = []
    gone: set[Node] = set()  # erased with a tuple output's getitems
    index = 0
    for p in plan.outputs:
        node = region[p]
        if is_tuple_node(node):
            gone |= _replace_tuple_output(node, index, invoke, takeovers, redirect)
        else:
            item = graph.create_node("call_function", operator.getitem, (invoke, index), {})
            node.replace_all_uses_with(item, propagate_meta=True)
            takeovers.append((node, item))
        index += output_width(node)
    set_call_value(invoke, region, plan)
    flat = {region[i] for i in plan.flattened}
    erased = [n for n in region if n not in flat]
    erased += dead_readers(erased, context.dead)  # RPL-27: nothing live reads them
    for node in reversed(erased):
        if node not in gone:
            graph.erase_node(node)
        redirect(node, invoke)
    context.replaced(erased, invoke, takeovers)
    return invoke, erased


def _replace_tuple_output(
    node: Node, index: int, invoke: Node, takeovers: Takeovers, redirect: Redirect
) -> set[Node]:
    """Re-point each getitem chain on a tuple output to the call's flattened outputs from
    `index` on (RPL-3), recording in `takeovers` which getitem took over which; return the
    nodes erased.

    Children are visited last-in first-out and each new getitem is inserted right after the
    call, exactly as torch does, so the node order after sorting is torch's.
    """
    graph = invoke.graph
    spec = tuple_output_spec(node)
    stack: deque[tuple[Node, tuple[int, ...]]] = deque((c, (i,)) for c, i in getitem_users(node))
    erased: set[Node] = set()
    while stack:
        item, path = stack.pop()
        stack.extend((c, (*path, i)) for c, i in getitem_users(item))
        with graph.inserting_after(invoke):
            out = graph.create_node(
                "call_function", operator.getitem, (invoke, index + spec[path]), {}
            )
        item.replace_all_uses_with(out, propagate_meta=True)
        takeovers.append((item, out))
        redirect(item, out)  # may sit outside the region
        graph.erase_node(item)
        erased.add(item)
    if not node.users:  # a region node may still use the tuple whole: erased with the region
        graph.erase_node(node)
        erased.add(node)
    return erased
