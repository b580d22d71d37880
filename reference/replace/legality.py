"""Outlining legality: every reason a region (or a whole group) stays as it is (spec chapter
03, RPL).

`Refusal` is the closed list, in the order the pass asks: `taken_over` of the representative
(RPL-17), the rules on the whole group (`group_veto`), the gate hook (RPL-11), each region's
rules (`region_veto`), the cycle rule over the regions that passed (RPL-25, `cycle`), and last
`taken_over` again of each region just before it is replaced (a call of its own group may have
taken one of its nodes). A rule's check holds or is violated with a witness naming the nodes
(`reference.verdict`'s `Check`); the first violated rule is the `Veto`. torch's own checks are
here: no external input (RPL-5), a written input (RPL-7), shared storage (RPL-8); the rules
torch lacks are in `stricter`, what they read in `context`. What a node reads and writes comes
from the alias DB (chapter 09): a write through any alias counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import torch
import torch.fx

from reference.effects.alias_db import AliasDB
from reference.fx_helpers import example_value, flat_node_args
from reference.replace import stricter
from reference.replace.context import OutlineContext
from reference.replace.plan import Group, OutlinePlan, Region, external_usages, operands
from reference.replace.stricter import Resolve
from reference.verdict import HOLDS, Check, Holds, Violated

__all__ = ["Check", "OutlineContext", "Refusal", "Ruling", "Veto", "group_veto", "region_veto"]

Node = torch.fx.Node


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


def group_veto(group: Group, plan: OutlinePlan) -> Ruling:
    """RPL-5 and RPL-23: a group none of whose regions can be called."""
    if not external_usages(group[0]):
        return Veto(Refusal.NO_INPUTS, "")
    return veto(Refusal.OUTPUT, stricter.unreturnable_output(group[0], plan))


def region_veto(
    region: Region, group: Group, plan: OutlinePlan, context: OutlineContext, resolve: Resolve
) -> Ruling:
    """The first rule that refuses `region` of `group`, asked in `Refusal`'s order (RPL-20,
    RPL-6, RPL-16, RPL-7, RPL-21, RPL-24, RPL-8, RPL-9, RPL-28, RPL-18), or `HOLDS`. RPL-7 and
    torch's part of RPL-8 are here; the rest torch lacks (`stricter`)."""
    rules: list[tuple[Refusal, Callable[[], Check]]] = [
        (Refusal.OTHER_BODY, lambda: stricter.other_body(region, group[0], plan, resolve)),
        (Refusal.WIRING, lambda: stricter.other_wiring(region, group[0])),
        (Refusal.SPANS_PIN, lambda: stricter.spans_pin(region, context)),
        (Refusal.MUTATED_INPUT, lambda: writes_input(region, plan, context.db)),
        (Refusal.OPERAND, lambda: stricter.untaken_operand(region, plan)),
        (Refusal.FUNCTORCH, lambda: stricter.wrapped_value(region, plan)),
        (Refusal.ALIASING, lambda: shared_storage(region, plan, context.db)),
        (Refusal.ALIASING, lambda: stricter.result_aliases_operand(region, plan, context.db)),
        (Refusal.SPLIT_MUTATION, lambda: stricter.written_between(region, context.db)),
        (Refusal.SAVED_OPERAND, lambda: stricter.saved_then_written(region, plan, context)),
        (Refusal.WHOLE_TUPLE, lambda: stricter.tuple_used_whole(region, plan)),
    ]
    for rule, check in rules:
        ruling = veto(rule, check())
        if isinstance(ruling, Veto):
            return ruling
    return HOLDS


def veto(rule: Refusal, check: Check) -> Ruling:
    return Veto(rule, check.witness) if isinstance(check, Violated) else HOLDS


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


def shared_storage(region: Region, plan: OutlinePlan, db: AliasDB) -> Check:
    """RPL-8: torch's input-input, output-output and input-output storage checks, by storage
    class, on tensor values, flattened tuple getitems exempt (what torch's checks miss is
    `stricter.result_aliases_operand`). A value whose storage cannot be read cannot be shown not
    to alias: refused."""
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
    return HOLDS
