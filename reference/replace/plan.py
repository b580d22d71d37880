"""Outlining: one shared subgraph per region group (spec chapter 03, RPL).

`plan_outline(group)` decides, as plain data, what the subgraph takes and returns: one input
slot per class of external-input usages that refer to the same node in *every* region (RPL-2),
tuple-valued inputs passed as their getitem children (RPL-4), and the union over all regions of
positions with live external users as outputs (RPL-3, RPL-27). `build_subgraph(region0, plan)`
copies the representative region into a new `fx.Graph` with those placeholders and outputs,
laid out as torch lays them out (RPL-1).
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
import torch.fx

from reference.fx_helpers import example_value, flat_node_args
from reference.replace.bodies import is_body

Node = torch.fx.Node
Region = Sequence[Node]  # nodes in graph order
Group = Sequence[Region]  # regions computing the same thing, region 0 the representative
Groups = Sequence[Group]  # in torch's order


@dataclass(frozen=True, slots=True)
class Usage:
    """An external input used by region node `node` at flat node-argument position `arg`."""

    node: int
    arg: int


@dataclass(frozen=True, slots=True)
class InputSlot:
    """Usages that get one operand; `flattened` holds the region positions of the getitems
    passed instead of a tuple-valued input (RPL-4), else is empty. An `attribute` slot is a
    `get_attr` input (a higher-order op's body): no operand, the subgraph fetches the
    representative's attribute itself (RPL-20)."""

    usages: tuple[Usage, ...]
    flattened: tuple[int, ...] = ()
    attribute: str | None = None

    @property
    def is_operand(self) -> bool:
        return self.attribute is None


@dataclass(frozen=True, slots=True)
class OutlinePlan:
    """What the subgraph of a group takes (slots, in order) and returns (region positions)."""

    slots: tuple[InputSlot, ...]
    outputs: tuple[int, ...]

    @property
    def flattened(self) -> frozenset[int]:
        return frozenset(i for s in self.slots for i in s.flattened)


def is_tuple_node(node: Node) -> bool:
    return isinstance(example_value(node), tuple)


def external_usages(region: Region) -> dict[Node, list[Usage]]:
    """External inputs in first-use order (region position, then flat arg position)."""
    inside = set(region)
    found: dict[Node, list[Usage]] = {}
    for p, node in enumerate(region):
        for j, arg in enumerate(flat_node_args(node)):
            if arg not in inside:
                found.setdefault(arg, []).append(Usage(p, j))
    return found


def usage_node(region: Region, usage: Usage) -> Node:
    return flat_node_args(region[usage.node])[usage.arg]


def operands(region: Region, plan: OutlinePlan) -> list[Node]:
    """The call's operands for `region`: per slot, its first usage's node, or the flattened
    getitems; attribute slots pass nothing (RPL-2, RPL-4, RPL-20)."""
    found: list[Node] = []
    for slot in plan.slots:
        if not slot.is_operand:
            continue
        if slot.flattened:
            found.extend(region[i] for i in slot.flattened)
        else:
            found.append(usage_node(region, slot.usages[0]))
    return found


def output_positions(group: Group, dead: frozenset[Node] = frozenset()) -> tuple[int, ...]:
    """RPL-3: positions whose node has a user outside its region, in any region, sorted; a
    `dead` user is none (RPL-27)."""
    found: set[int] = set()
    for region in group:
        skip = dead | set(region)
        found.update(p for p, n in enumerate(region) if any(u not in skip for u in n.users))
    return tuple(sorted(found))


def plan_outline(group: Group, dead: frozenset[Node] = frozenset()) -> OutlinePlan:
    """Slots and outputs of a group's subgraph; `group[0]` is the representative (RPL-2).

    Usages of one node of region 0 share a slot only when they also share a node in every
    other region; with agreeing regions this is torch's one-placeholder-per-node layout.
    """
    region0 = group[0]
    slots: list[InputSlot] = []
    for node, usages in external_usages(region0).items():
        if is_body(node):
            slots.append(InputSlot(tuple(usages), attribute=str(node.target)))
            continue
        flattened = _flattened_positions(node, region0) if is_tuple_node(node) else []
        if flattened and {u.node for u in usages} <= set(flattened):
            slots.append(InputSlot(tuple(usages), tuple(flattened)))
            continue
        classes: dict[tuple[Node, ...], list[Usage]] = {}
        for u in usages:
            classes.setdefault(tuple(usage_node(r, u) for r in group), []).append(u)
        slots.extend(InputSlot(tuple(c)) for c in classes.values())
    return OutlinePlan(tuple(slots), output_positions(group, dead))


def getitem_users(node: Node) -> list[tuple[Node, int]]:
    """The `getitem(node, i)` users with a constant int index, with that index."""
    found: list[tuple[Node, int]] = []
    for u in node.users:
        index = u.args[1] if len(u.args) > 1 else None
        if u.target is operator.getitem and isinstance(index, int):
            found.append((u, index))
    return found


def _flattened_positions(node: Node, region: Region) -> list[int]:
    """RPL-4: region positions of the getitems (BFS) on a tuple input used inside the region."""
    position = {n: i for i, n in enumerate(region)}
    inside = set(region)
    found: list[int] = []
    queue = deque(u for u, _ in getitem_users(node))
    while queue:
        item = queue.popleft()
        p = position.get(item)
        if p is not None and p not in found and any(u in inside for u in item.users):
            found.append(p)
        queue.extend(u for u, _ in getitem_users(item))
    return found


def slot_names(region0: Region, plan: OutlinePlan) -> list[str]:
    """Placeholder names: `subgraph_input_<outer name>`, a node passed in several slots getting
    `_1`, `_2`, ... on its later placeholders (RPL-2), or torch's (sic) `supgraph_input_<tuple
    name>_flattened_<position>` per getitem of a tuple input."""
    names: list[str] = []
    for slot in plan.slots:
        outer = usage_node(region0, slot.usages[0]).name
        if not slot.is_operand:
            continue
        if slot.flattened:
            names.extend(f"supgraph_input_{outer}_flattened_{i}" for i in slot.flattened)
            continue
        base = candidate = f"subgraph_input_{outer}"
        suffix = 0
        while candidate in names:
            suffix += 1
            candidate = f"{base}_{suffix}"
        names.append(candidate)
    return names


def build_subgraph(region0: Region, plan: OutlinePlan) -> torch.fx.Graph:
    """Copy the representative region into a new graph with the plan's placeholders and a tuple
    output; tuple-valued outputs are flattened into getitem trees (RPL-1, RPL-3)."""
    sub = torch.fx.Graph()
    names = iter(slot_names(region0, plan))
    by_usage: dict[Usage, Node] = {}
    copies: dict[Node, Node] = {}
    attributes = [s for s in plan.slots if not s.is_operand]
    for slot in (s for s in plan.slots if s.is_operand):
        if slot.flattened:
            for i in slot.flattened:
                copies[region0[i]] = _placeholder(sub, next(names), region0[i])
        else:
            ph = _placeholder(sub, next(names), usage_node(region0, slot.usages[0]))
            by_usage.update((u, ph) for u in slot.usages)
    for slot in attributes:  # RPL-20: the body travels as an attribute, never as an operand
        fetch = sub.get_attr(str(slot.attribute))
        by_usage.update((u, fetch) for u in slot.usages)
    outputs: list[Node] = []
    for p, node in enumerate(region0):
        if p in plan.flattened:
            continue
        copies[node] = _copy(sub, node, p, by_usage, copies)
        if p in plan.outputs:
            outputs.extend(_output_items(sub, node, copies[node]))
    sub.output(tuple(outputs))
    return sub


def _placeholder(sub: torch.fx.Graph, name: str, outer: Node) -> Node:
    """A placeholder carrying the example value of the representative's operand, so checkers
    can compare every call's operands with the subgraph's signature (CHK-5)."""
    ph = sub.placeholder(name)
    value = example_value(outer)
    if value is not None:
        ph.meta["example_value"] = value
    return ph


def _copy(
    sub: torch.fx.Graph,
    node: Node,
    position: int,
    by_usage: Mapping[Usage, Node],
    copies: Mapping[Node, Node],
) -> Node:
    """`node` copied into `sub`: each argument (`node_copy` maps them in `flat_node_args` order)
    is its usage's placeholder or fetch when it has one, else its copy."""
    mapped: list[Node] = []
    for j, arg in enumerate(flat_node_args(node)):
        usage = Usage(position, j)
        mapped.append(by_usage[usage] if usage in by_usage else copies[arg])
    args = iter(mapped)
    return sub.node_copy(node, lambda _: next(args))


def _output_items(sub: torch.fx.Graph, node: Node, copy: Node) -> list[Node]:
    """The copy itself, or for a tuple value its getitem tree in breadth-first order."""
    if not is_tuple_node(node):
        return [copy]
    value = example_value(node)
    items: list[Node] = []
    queue: deque[tuple[object, Node, int]] = deque((e, copy, i) for i, e in enumerate(value))
    while queue:
        element, parent, index = queue.popleft()
        with sub.inserting_after(parent):
            item = sub.create_node("call_function", operator.getitem, (parent, index), {})
        item.meta["example_value"] = element
        items.append(item)
        if isinstance(element, tuple):
            queue.extend((e, item, i) for i, e in enumerate(element))
    return items


def tuple_output_spec(node: Node) -> dict[tuple[int, ...], int]:
    """Path (indices from the tuple node) -> offset among its flattened outputs, BFS order."""
    value = example_value(node)
    spec: dict[tuple[int, ...], int] = {}
    queue: deque[tuple[object, tuple[int, ...]]] = deque((e, (i,)) for i, e in enumerate(value))
    while queue:
        element, path = queue.popleft()
        spec[path] = len(spec)
        if isinstance(element, tuple):
            queue.extend((e, (*path, i)) for i, e in enumerate(element))
    return spec


def output_width(node: Node) -> int:
    """How many subgraph outputs a region node contributes."""
    return len(tuple_output_spec(node)) if is_tuple_node(node) else 1
