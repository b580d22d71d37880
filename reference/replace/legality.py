"""Outlining legality: every reason a region (or a whole group) stays as it is (spec chapter
03, RPL).

`Refusal` is the closed list, in the order the pass asks: `taken_over` of the representative,
the rules on the whole group (`group_veto`), the gate hook (RPL-11), each region's rules
(`region_veto`), the cycle rule over the regions that passed (RPL-25, `cycle`), and last
`taken_over` again of each region just before it is replaced (a call of its own group may have
taken one of its nodes). A rule's check holds or is violated with a witness naming the nodes
(`reference.verdict`'s `HOLDS` and `Violated`); the first violated rule is the `Veto`. What a
node reads and writes comes from the alias DB (chapter 09): a write through any alias counts,
so a region that writes a view of its input, or reads a value an outside node writes through
another view, is refused.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

import torch
import torch.fx

from reference.effects.alias_db import AliasDB, StorageClass
from reference.fx_helpers import example_value, flat_node_args, grad_modes
from reference.replace.bodies import same_body
from reference.replace.dead import dead_nodes
from reference.replace.plan import (
    Group,
    OutlinePlan,
    Region,
    external_usages,
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
from reference.verdict import HOLDS, Holds, Violated

Node = torch.fx.Node
Resolve = Callable[[str], object]
Wiring = tuple[tuple[int | None, ...], ...]


class Refusal(StrEnum):
    """Why a region (or a whole group) is not replaced; each names its invariant."""

    TAKEN_OVER = "RPL-17: a node of the region was replaced by an earlier call"
    NO_INPUTS = "RPL-5: the representative region has no external input"
    OUTPUT = "RPL-23: an output is a value torch's invoke_subgraph runtime cannot return"
    GATE = "RPL-11: the checker did not prove the replacement safe"
    OTHER_BODY = "RPL-20: the region reads a higher-order op body unlike the representative's"
    WIRING = "RPL-6: the region's internal wiring differs from the representative's"
    SPANS_PIN = "RPL-16: the region spans a pinned global-state node (autocast, grad, functorch)"
    MUTATED_INPUT = "RPL-7: the region writes one of its external inputs, or an alias of one"
    OPERAND = "RPL-21: an operand is a value torch's invoke_subgraph runtime does not take"
    FUNCTORCH = "RPL-24: the region computes with functorch-wrapped tensors (vmap, grad)"
    ALIASING = "RPL-8: inputs or outputs of the region share storage"
    SPLIT_MUTATION = "RPL-9: a value the region uses is written outside it, between its nodes"
    SAVED_OPERAND = "RPL-28: an operand the call saves for backward is written after the region"
    WHOLE_TUPLE = "RPL-18: an outside node uses a tuple output of the region whole"
    CYCLE = "RPL-25: replacing the group's regions would close a dependency cycle"

    @property
    def id(self) -> str:
        """The invariant that refuses: `RPL-7`."""
        return self.value.split(":", 1)[0]


@dataclass(frozen=True, slots=True)
class Veto:
    """A rule refuses: which, and why (`detail` names the nodes). `region` is the region a veto
    of the whole group names (the gate's), else None."""

    rule: Refusal
    detail: str
    region: int | None = None


Ruling = Holds | Veto  # HOLDS: no rule refuses
Check = Holds | Violated  # one rule's check: it holds, or is violated with a witness


class OutlineContext:
    """What the checks read besides the region: the alias DB (chapter 09), the pinned
    global-state switches (RPL-16), which nodes earlier calls replaced (RPL-17), the dead
    nodes (RPL-27) and the grad mode at each node (RPL-28)."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        db: AliasDB,
        pinned: Iterable[object],
        grouped: Iterable[Node] = (),
    ) -> None:
        self.db = db
        targets = tuple(pinned)
        self.pinned = [n for n in graph.nodes if n.target in targets]
        self.pinned_ranks = [db.rank[n] for n in self.pinned]
        self.replaced_by: dict[Node, Node] = {}
        self.took_over: dict[Node, Node] = {}  # a getitem in a region as now -> the node found
        self.dead = dead_nodes(graph, db, grouped)  # no reason for an output (RPL-27)
        self.grad_on = grad_modes(graph)  # RPL-28

    def pin_between(self, nodes: Iterable[Node]) -> Node | None:
        """A pinned switch strictly inside the span of `nodes`, if any (RPL-16)."""
        ranks = [self.db.rank[n] for n in nodes]
        k = bisect.bisect_right(self.pinned_ranks, min(ranks))
        inside = k < len(self.pinned_ranks) and self.pinned_ranks[k] < max(ranks)
        return self.pinned[k] if inside else None

    def now(self, region: Region) -> list[Node]:
        """`region` as it is now: a node an earlier call replaced (a getitem of a tuple that
        call's region output) is the call's getitem that took over from it (RPL-17)."""
        now = [self.replaced_by.get(n, n) for n in region]
        pairs = zip(region, now, strict=True)
        self.took_over.update((new, old) for old, new in pairs if old is not new)
        return now

    def taken_over(self, region: Region, plan: OutlinePlan) -> Ruling:
        """RPL-17: the first node of `region` (as found) an earlier call has replaced (and
        erased) that the region's call would compute; a flattened tuple getitem (RPL-4) is only
        an operand, and the getitem that took over from it passes the same value."""
        flat = plan.flattened
        found = (n for p, n in enumerate(region) if p not in flat and n in self.replaced_by)
        gone = next(found, None)
        if gone is None:
            return HOLDS
        by = self.replaced_by[gone].args[0]
        assert isinstance(by, Node), "RPL-12: a take-over getitem reads its call"
        return Veto(Refusal.TAKEN_OVER, f"{gone.name} is now a getitem of {by.name}")


def group_veto(group: Group, plan: OutlinePlan) -> Ruling:
    """RPL-5 and RPL-23: a group none of whose regions can be called."""
    if not external_usages(group[0]):
        return Veto(Refusal.NO_INPUTS, "")
    return _veto(Refusal.OUTPUT, unreturnable_output(group[0], plan))


def region_veto(
    region: Region, group: Group, plan: OutlinePlan, context: OutlineContext, resolve: Resolve
) -> Ruling:
    """The first rule that refuses `region` of `group` (RPL-20, RPL-6 .. RPL-9, RPL-16 to
    RPL-18, RPL-21, RPL-24, RPL-28), asked in this order, or `HOLDS`."""
    rules: list[tuple[Refusal, Callable[[], Check]]] = [
        (Refusal.OTHER_BODY, lambda: other_body(region, group[0], plan, resolve)),
        (Refusal.WIRING, lambda: other_wiring(region, group[0])),
        (Refusal.SPANS_PIN, lambda: spans_pin(region, context)),
        (Refusal.MUTATED_INPUT, lambda: writes_input(region, plan, context.db)),
        (Refusal.OPERAND, lambda: untaken_operand(region, plan)),
        (Refusal.FUNCTORCH, lambda: wrapped_value(region, plan)),
        (Refusal.ALIASING, lambda: shared_storage(region, plan, context.db)),
        (Refusal.SPLIT_MUTATION, lambda: written_between(region, context.db)),
        (Refusal.SAVED_OPERAND, lambda: saved_then_written(region, plan, context)),
        (Refusal.WHOLE_TUPLE, lambda: tuple_used_whole(region, plan)),
    ]
    for rule, check in rules:
        ruling = _veto(rule, check())
        if isinstance(ruling, Veto):
            return ruling
    return HOLDS


def _veto(rule: Refusal, check: Check) -> Ruling:
    return Veto(rule, check.witness) if isinstance(check, Violated) else HOLDS


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


def writes_input(region: Region, plan: OutlinePlan, db: AliasDB) -> Check:
    """RPL-7: a region node writes a storage class one of the call's operands holds: the operand
    itself (torch's rule, D5) or any alias of it, such as a view made inside the region."""
    outside = {c for operand in operands(region, plan) for c in db.classes(operand)}
    for node in region:
        written = db.writes(node) & outside
        if written:
            args = [a for a in flat_node_args(node) if db.classes(a) & written]
            return Violated(f"{node.name} writes {args[0].name if args else 'an input'}")
    return HOLDS


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


def shared_storage(region: Region, plan: OutlinePlan, db: AliasDB) -> Check:
    """RPL-8: torch's input-input, output-output and input-output storage checks, by storage
    class, on tensor values, flattened tuple getitems exempt; then what torch's checks miss
    (`result_aliases_operand`). A value whose storage cannot be read cannot be shown not to
    alias: refused."""
    flat = {region[i] for i in plan.flattened}
    seen: dict[int, tuple[str, Node]] = {}
    inputs = [n for n in operands(region, plan) if n not in flat]
    outputs = [region[i] for i in plan.outputs if region[i] not in flat]
    for kind, nodes in (("input", inputs), ("output", outputs)):
        for node in nodes:
            if not isinstance(example_value(node), torch.Tensor):
                continue
            why = db.unreadable(node)
            if why:
                return Violated(f"{kind} {node.name} has no readable storage ({why})")
            own = sorted(db.classes(node))
            shared = next((seen[c] for c in own if c in seen), None)
            if shared is not None and shared[1] is node:
                return Violated(f"{kind} {node.name} is passed as two operands")
            if shared is not None:
                return Violated(
                    f"{shared[0]} {shared[1].name} and {kind} {node.name} share storage"
                )
            seen.update(dict.fromkeys(own, (kind, node)))
    return result_aliases_operand(region, plan, db)


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


def getitem_users(node: Node) -> list[tuple[Node, int]]:
    """The `getitem(node, i)` users with a constant int index, with that index."""
    found: list[tuple[Node, int]] = []
    for u in node.users:
        index = u.args[1] if len(u.args) > 1 else None
        if u.target is operator.getitem and isinstance(index, int):
            found.append((u, index))
    return found


def unreturnable_output(region0: Region, plan: OutlinePlan) -> Check:
    """RPL-23: the first output of the plan torch's runtime cannot return."""
    for p in plan.outputs:
        value = example_value(region0[p])
        if value is not None and not runtime_returns(value):
            return Violated(f"{region0[p].name} is a {type(value).__name__}")
    return HOLDS
