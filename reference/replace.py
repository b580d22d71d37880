"""Replacement: one region becomes one `invoke_subgraph` call (spec chapter 03, RPL).

`refusal(...)` says why a region must stay as it is, checks in torch's order first (mutated
input, aliasing), then ours (wiring, mutation between region nodes). `replace_region(...)`
appends the call and its getitems, re-points every external use, erases the region and moves
the erased nodes' ordering dependencies onto the call.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable, Sequence
from enum import StrEnum

import torch
import torch.fx

from reference.bodies import same_body
from reference.deps import OrderingDeps
from reference.facts import Unreadable, ValueFacts
from reference.keys import example_value, flat_node_args, unique_node_args
from reference.names import INVOKE
from reference.outline import (
    OutlinePlan,
    functorch_wrapped,
    is_tuple_node,
    output_width,
    runtime_takes,
    tuple_output_spec,
)
from reference.outline import usage_node as _usage_node

Node = torch.fx.Node
Resolve = Callable[[str], object]
Wiring = tuple[tuple[int | None, ...], ...]


class Reason(StrEnum):
    """Why a region (or a whole group) is not replaced; each names its invariant."""

    NO_INPUTS = "RPL-5: the representative region has no external input"
    MUTATED_INPUT = "RPL-7: the region mutates one of its external inputs"
    ALIASING = "RPL-8: inputs or outputs of the region share storage"
    WIRING = "RPL-6: the region's internal wiring differs from the representative's"
    SPLIT_MUTATION = "RPL-9: a value the region uses is mutated outside it, between its nodes"
    SPANS_PIN = "RPL-16: the region spans a pinned global-state node (autocast, grad, functorch)"
    TAKEN_OVER = "RPL-17: a node of the region was replaced by an earlier call"
    WHOLE_TUPLE = "RPL-18: an outside node uses a tuple output of the region whole"
    GATE = "RPL-11: the checker did not prove the replacement safe"
    OTHER_BODY = "RPL-20: the region reads a higher-order op body unlike the representative's"
    OPERAND = "RPL-21: an operand is a value torch's invoke_subgraph runtime does not take"
    OUTPUT = "RPL-23: an output is a value torch's invoke_subgraph runtime cannot return"
    FUNCTORCH = "RPL-24: the region computes with functorch-wrapped tensors (vmap, grad)"

    @property
    def id(self) -> str:
        """The invariant that refuses: `RPL-7`."""
        return self.value.split(":", 1)[0]


def wiring(region: Sequence[Node]) -> Wiring:
    """Per node, per flat node argument: the region position it comes from, or None."""
    position = {n: i for i, n in enumerate(region)}
    return tuple(tuple(position.get(a) for a in flat_node_args(n)) for n in region)


def operands(region: Sequence[Node], plan: OutlinePlan) -> list[Node]:
    """The call's operands: per slot, its first usage's node, or the flattened getitems."""
    found: list[Node] = []
    for slot in plan.slots:
        if not slot.is_operand:
            continue  # RPL-20: fetched inside the subgraph
        if slot.flattened:
            found.extend(region[i] for i in slot.flattened)
        else:
            found.append(_usage_node(region, slot.usages[0]))
    return found


def other_body(
    region: Sequence[Node], region0: Sequence[Node], plan: OutlinePlan, resolve: Resolve
) -> tuple[Reason, str] | None:
    """RPL-20: every `get_attr` the region reads must fetch the representative's body, or one
    that computes the same thing (`same_body`): the subgraph calls the representative's."""
    for slot in plan.slots:
        for u in slot.usages if not slot.is_operand else ():
            mine, theirs = _usage_node(region, u), _usage_node(region0, u)
            if mine.op != "get_attr":
                return Reason.OTHER_BODY, f"{mine.name} is not a get_attr"
            if not same_body(resolve(str(theirs.target)), resolve(str(mine.target))):
                return Reason.OTHER_BODY, f"{mine.target} differs from {theirs.target}"
    return None


def refusal(
    region: Sequence[Node], plan: OutlinePlan, reference: Wiring, facts: ValueFacts
) -> tuple[Reason, str] | None:
    """Why `region` cannot be replaced with the plan's subgraph, or None (RPL-6..RPL-9,
    RPL-16, RPL-18)."""
    if wiring(region) != reference:
        return Reason.WIRING, "argument sources differ from region 0"
    pin = facts.pin_between(region)
    if pin is not None:
        return Reason.SPANS_PIN, f"{pin.name} lies between the region's nodes"
    for slot in plan.slots:
        for u in slot.usages:
            if u.arg in facts.mutated.get(region[u.node], frozenset()):
                return Reason.MUTATED_INPUT, f"{region[u.node].name} mutates argument {u.arg}"
    values = _value_refusal(region, plan)
    if values is not None:
        return values
    aliased = _aliasing(region, plan, facts)
    if aliased is not None:
        return Reason.ALIASING, aliased
    split = _split_mutation(region, facts)
    if split is not None:
        return Reason.SPLIT_MUTATION, split
    whole = _tuple_used_whole(region, plan)
    return None if whole is None else (Reason.WHOLE_TUPLE, whole)


def _value_refusal(region: Sequence[Node], plan: OutlinePlan) -> tuple[Reason, str] | None:
    """RPL-21: an operand torch's runtime does not take; RPL-24: the first operand or region
    node whose example value is functorch-wrapped."""
    inputs = operands(region, plan)
    for operand in inputs:
        value = example_value(operand)
        if not runtime_takes(value):
            return Reason.OPERAND, f"{operand.name} is a {type(value).__name__}"
    for node in (*inputs, *region):
        kind = functorch_wrapped(example_value(node))
        if kind:
            return Reason.FUNCTORCH, f"{node.name} is a {kind}"
    return None


def _tuple_used_whole(region: Sequence[Node], plan: OutlinePlan) -> str | None:
    """RPL-18: an outside user of a tuple output (or of a tuple inside it) that is not an int
    getitem, e.g. `view(x, size)` on `size = t.size()`: the call returns only the elements."""
    inside = set(region)
    stack = [region[p] for p in plan.outputs if is_tuple_node(region[p])]
    while stack:
        node = stack.pop()
        items = [u for u, _ in _getitem_users(node)]
        whole = [u for u in node.users if u not in inside and u not in items]
        if whole:
            return f"{whole[0].name} uses {node.name} whole"
        stack.extend(u for u in reversed(items) if is_tuple_node(u))
    return None


def _aliasing(region: Sequence[Node], plan: OutlinePlan, facts: ValueFacts) -> str | None:
    """torch's input-input, output-output and input-output storage checks (RPL-8)."""
    flat = {region[i] for i in plan.flattened}
    seen: dict[object, tuple[str, Node]] = {}
    inputs = [n for n in operands(region, plan) if n not in flat]
    outputs = [region[i] for i in plan.outputs if region[i] not in flat]
    for kind, nodes in (("input", inputs), ("output", outputs)):
        for node in nodes:
            storage = facts.storage(node)
            if storage is None:
                continue
            if isinstance(storage, Unreadable):  # no proof they do not alias: refuse
                return f"{kind} {node.name} has no readable storage ({storage.reason})"
            if storage in seen:
                other_kind, other = seen[storage]
                return f"{other_kind} {other.name} and {kind} {node.name} share storage"
            seen[storage] = (kind, node)
    return None


def _split_mutation(region: Sequence[Node], facts: ValueFacts) -> str | None:
    """RPL-9: an outside writer of a value the region reads or produces sits between two of the
    region's accesses to it, so no single call position can reproduce the original order."""
    inside = set(region)
    accesses: dict[Node, list[int]] = {}
    for node in region:
        accesses.setdefault(node, []).append(facts.rank[node])
        for arg in unique_node_args(node):
            accesses.setdefault(arg, []).append(facts.rank[node])
    for value, ranks in accesses.items():
        lo, hi = min(ranks), max(ranks)
        for writer in facts.writers.get(value, ()):
            if writer not in inside and lo < facts.rank.get(writer, -1) < hi:
                return f"{writer.name} mutates {value.name} between region nodes"
    return None


def replace_region(
    graph: torch.fx.Graph,
    region: Sequence[Node],
    plan: OutlinePlan,
    call: tuple[Node, str],
    facts: ValueFacts,
    deps: OrderingDeps,
    *,
    inherit: bool = True,
) -> Node:
    """Append `invoke_subgraph(get_attr, name, *operands)`, re-point uses, erase the region.

    `inherit=False` moves erased nodes' deps as torch does, dropping their own (SRT-10)."""
    get_attr, name = call
    invoke = graph.create_node(
        "call_function",
        INVOKE,
        (get_attr, name, *operands(region, plan)),
        {},
    )
    erased: set[Node] = set()
    index = 0
    for p in plan.outputs:
        node = region[p]
        if is_tuple_node(node):
            erased |= _replace_tuple_output(graph, node, (index, invoke), (facts, deps), inherit)
        else:
            item = graph.create_node("call_function", operator.getitem, (invoke, index), {})
            node.replace_all_uses_with(item, propagate_meta=True)
            facts.take_over(node, item, region)
        index += output_width(node)
    flat = {region[i] for i in plan.flattened}
    for node in reversed(region):
        if node in flat:
            continue
        if node not in erased:
            graph.erase_node(node)
        deps.redirect(node, invoke, inherit=inherit)  # SRT-10: keep the erased node's deps
    return invoke


def _getitem_users(node: Node) -> list[tuple[Node, int]]:
    """The `getitem(node, i)` users with a constant int index, with that index."""
    found: list[tuple[Node, int]] = []
    for u in node.users:
        index = u.args[1] if len(u.args) > 1 else None
        if u.target is operator.getitem and isinstance(index, int):
            found.append((u, index))
    return found


def _replace_tuple_output(
    graph: torch.fx.Graph,
    node: Node,
    at: tuple[int, Node],
    state: tuple[ValueFacts, OrderingDeps],
    inherit: bool,
) -> set[Node]:
    """Re-point each getitem chain on a tuple output to the call's flattened output (RPL-3).

    Children are visited last-in first-out and each new getitem is inserted right after the
    call, exactly as torch does, so the node order after sorting is torch's.
    """
    index, invoke = at
    spec = tuple_output_spec(node)
    stack: deque[tuple[Node, tuple[int, ...]]] = deque((c, (i,)) for c, i in _getitem_users(node))
    erased: set[Node] = set()
    while stack:
        item, path = stack.pop()
        stack.extend((c, (*path, i)) for c, i in _getitem_users(item))
        with graph.inserting_after(invoke):
            out = graph.create_node(
                "call_function", operator.getitem, (invoke, index + spec[path]), {}
            )
        item.replace_all_uses_with(out, propagate_meta=True)
        facts, deps = state
        facts.take_over(item, out, ())
        deps.redirect(item, out, inherit=inherit)  # the getitem may sit outside the region
        graph.erase_node(item)
        erased.add(item)
    if not node.users:  # a region node may still use the tuple whole: erased with the region
        graph.erase_node(node)
        erased.add(node)
    return erased
