"""The refusals torch's pass lacks (spec chapter 03; each rule's *Upstream* note says what torch
does instead): RPL-6 (wiring), RPL-8 beyond torch's checks (`result_aliases_operand`), RPL-9
(a write between the region's nodes), RPL-16 (a pinned switch inside), RPL-18 (a tuple output
used whole), RPL-20 (bodies), RPL-21, RPL-23 and RPL-24 (what torch's `invoke_subgraph` runtime
takes and returns, `runtime`) and RPL-28 (operands saved for backward). `legality` asks them in
`Refusal`'s order.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.fx

from reference.effects.alias_db import AliasDB, StorageClass
from reference.fx_helpers import example_value, flat_node_args
from reference.replace.bodies import same_body
from reference.replace.context import OutlineContext
from reference.replace.plan import (
    OutlinePlan,
    Region,
    getitem_users,
    is_tuple_node,
    operands,
    usage_node,
)
from reference.replace.runtime import (
    functorch_wrapped,
    runtime_returns,
    runtime_takes,
    saves_operands,
)
from reference.verdict import HOLDS, Check, Violated

Node = torch.fx.Node
Resolve = Callable[[str], object]
Wiring = tuple[tuple[int | None, ...], ...]


def wiring(region: Region) -> Wiring:
    """Per node, per flat node argument: the region position it comes from, or None (RPL-6)."""
    position = {n: i for i, n in enumerate(region)}
    return tuple(tuple(position.get(a) for a in flat_node_args(n)) for n in region)


def other_wiring(region: Region, region0: Region) -> Check:
    """RPL-6: the region's nodes take their arguments from other positions than region 0's."""
    if wiring(region) == wiring(region0):
        return HOLDS
    return Violated("argument sources differ from region 0")


def other_body(region: Region, region0: Region, plan: OutlinePlan, resolve: Resolve) -> Check:
    """RPL-20: every `get_attr` the region reads fetches the representative's body, or one that
    computes the same thing (`same_body`): the subgraph calls the representative's."""
    for slot in plan.slots:
        for u in slot.usages if not slot.is_operand else ():
            mine, theirs = usage_node(region, u), usage_node(region0, u)
            if mine.op != "get_attr":
                return Violated(f"{mine.name} is not a get_attr")
            if not same_body(resolve(str(theirs.target)), resolve(str(mine.target))):
                return Violated(f"{mine.target} differs from {theirs.target}")
    return HOLDS


def spans_pin(region: Region, context: OutlineContext) -> Check:
    """RPL-16: a pinned global-state switch lies between the region's nodes."""
    pin = context.pin_between(region)
    return HOLDS if pin is None else Violated(f"{pin.name} lies between the region's nodes")


def untaken_operand(region: Region, plan: OutlinePlan) -> Check:
    """RPL-21: an operand torch's runtime does not take."""
    for operand in operands(region, plan):
        value = example_value(operand)
        if not runtime_takes(value):
            return Violated(f"{operand.name} is a {type(value).__name__}")
    return HOLDS


def wrapped_value(region: Region, plan: OutlinePlan) -> Check:
    """RPL-24: the first operand or region node whose example value is functorch-wrapped."""
    for node in (*operands(region, plan), *region):
        kind = functorch_wrapped(example_value(node))
        if kind:
            return Violated(f"{node.name} is a {kind}")
    return HOLDS


def result_aliases_operand(region: Region, plan: OutlinePlan, db: AliasDB) -> Check:
    """RPL-8 beyond torch's checks (CHK-18's rule): no output, a tuple output's elements
    included, shares a storage class with an operand, flattened getitems included."""
    by_class = {c: n for n in reversed(operands(region, plan)) for c in db.classes(n)}
    for node in (region[i] for i in plan.outputs):
        shared = sorted(db.classes(node) & by_class.keys())
        if shared:
            return Violated(
                f"input {by_class[shared[0]].name} and output {node.name} share storage"
            )
    return HOLDS


def written_between(region: Region, db: AliasDB) -> Check:
    """RPL-9: an outside writer of a storage class the region reads, writes or produces sits
    strictly between two of the region's accesses to it: one call position cannot keep both."""
    inside = set(region)
    ranks: dict[StorageClass, list[int]] = {}
    for node in region:
        for cls in db.reads(node) | db.writes(node) | db.classes(node):
            ranks.setdefault(cls, []).append(db.rank[node])
    for cls, where in sorted(ranks.items()):
        lo, hi = min(where), max(where)
        for writer in db.writers(cls):
            if writer not in inside and lo < db.rank.get(writer, -1) < hi:
                return Violated(f"{writer.name} writes what {_reader(region, cls, db)} reads")
    return HOLDS


def saved_then_written(region: Region, plan: OutlinePlan, context: OutlineContext) -> Check:
    """RPL-28: in training, torch's runtime saves every tensor operand of the call for backward
    (`saves_operands`); an outside write after the region to an operand's storage class (a view
    shares its base's version counter) makes backward fail, where the original's ops saved
    only what they need."""
    inputs = operands(region, plan)
    first = context.took_over.get(region[0], region[0])  # a getitem that took over (RPL-17)
    if not saves_operands(inputs, context.grad_on[first]):
        return HOLDS
    db, inside = context.db, set(region)
    last = max(db.rank[n] for n in region)
    for operand in inputs:
        for cls in sorted(db.classes(operand)):
            later = [w for w in db.writers(cls) if w not in inside and db.rank.get(w, -1) > last]
            if later:
                return Violated(f"{later[0].name} writes {operand.name} after the region")
    return HOLDS


def _reader(region: Region, cls: StorageClass, db: AliasDB) -> str:
    found = next((n for n in region if cls in db.reads(n) | db.classes(n)), region[0])
    return found.name


def tuple_used_whole(region: Region, plan: OutlinePlan) -> Check:
    """RPL-18: an outside user of a tuple output (or of a tuple inside it) that is not an int
    getitem, e.g. `view(x, size)` on `size = t.size()`: the call returns only the elements."""
    inside = set(region)
    stack = [region[p] for p in plan.outputs if is_tuple_node(region[p])]
    while stack:
        node = stack.pop()
        items = [u for u, _ in getitem_users(node)]
        whole = [u for u in node.users if u not in inside and u not in items]
        if whole:
            return Violated(f"{whole[0].name} uses {node.name} whole")
        stack.extend(u for u in reversed(items) if is_tuple_node(u))
    return HOLDS


def unreturnable_output(region0: Region, plan: OutlinePlan) -> Check:
    """RPL-23: the first output of the plan torch's runtime cannot return."""
    for p in plan.outputs:
        value = example_value(region0[p])
        if value is not None and not runtime_returns(value):
            return Violated(f"{region0[p].name} is a {type(value).__name__}")
    return HOLDS
