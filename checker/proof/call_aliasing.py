"""No call aliases, and no saved operand is written later (spec chapter 06, CHK-18 and CHK-22,
parts of CHK-1). torch's `invoke_subgraph` assumes
that a call's results share no storage with its operands and that its operands share none with
each other ("It's Dynamo's responsibility to prevent formation of invoke_subgraph ops if input
aliasing/mutation is detected", `torch/_higher_order_ops/invoke_subgraph.py`). Its
functionalization copies operands and results on that assumption, and under autograd an in-place
update of a result that views an operand raises.

Judged from the effects of chapter 09 alone: the caller's storage classes for the operands (two
getitems of one tuple value are exempt, as torch exempts them: `split`'s outputs passed one by
one; so are two values that carry such getitems across `split_module`'s partitions, followed
through placeholders and partition outputs by `placeholder_origins`), the body's for its results
against its placeholders.

In training, torch's runtime saves every tensor operand of a call for backward (RPL-28), and
backward fails when one of them was written after the call ("modified by an inplace
operation"): CHK-22 finds such a write, by storage class, after a call that saves.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping
from functools import partial

import torch
import torch.fx

from checker.proof.graphs import graph_modules
from checker.proof.verdict import HOLDS, Verdict, Violated, first_failure
from reference.effects.alias_db import AliasDB, StorageClass
from reference.fx_helpers import attribute, grad_modes
from reference.names import INVOKE
from reference.replace.runtime import saves_operands

Node = torch.fx.Node


def check_call_aliasing(
    module: torch.fx.GraphModule, origins: Mapping[Node, Node] | None = None
) -> Verdict:
    """HOLDS when no call of `module` has operands or results that alias; else Violated,
    `name: why`, for the first that has. `origins`: what placeholders carry, from
    `placeholder_origins` of the module tree `module` is part of."""
    calls = [n for n in module.graph.nodes if n.op == "call_function" and n.target is INVOKE]
    if not calls:
        return HOLDS
    db = AliasDB(module.graph)
    modes = grad_modes(module.graph)
    bodies: dict[object, Verdict] = {}  # a body called many times is judged once
    for call in calls:
        fetch = call.args[0]
        body = attribute(module, str(fetch.target)) if isinstance(fetch, Node) else None
        if body not in bodies:
            bodies[body] = _results(body)
        found = first_failure(
            partial(_operands, call, db, origins or {}),
            partial(bodies.__getitem__, body),
            partial(_saved_then_written, call, db, modes[call]),
        )
        if isinstance(found, Violated):
            return Violated(f"{call.name}: {found.witness}")
    return HOLDS


def placeholder_origins(gm: torch.fx.GraphModule) -> dict[Node, Node]:
    """What a node of `gm`'s tree carries across `split_module`'s partitions: a placeholder of a
    graph module that one `call_module` alone calls, the caller's argument at its position; a
    value such a call returns (the call, or a getitem of it), the callee's node it returns."""
    sites: dict[torch.fx.GraphModule, list[Node]] = {}
    for _, module in graph_modules(gm):
        for node in module.graph.find_nodes(op="call_module"):
            callee = attribute(module, str(node.target))
            if isinstance(callee, torch.fx.GraphModule):
                sites.setdefault(callee, []).append(node)
    found: dict[Node, Node] = {}
    for callee, calls in sites.items():
        if len(calls) == 1:
            found |= _carried(callee, calls[0])
    return found


def _carried(callee: torch.fx.GraphModule, call: Node) -> dict[Node, Node]:
    placeholders = callee.graph.find_nodes(op="placeholder")  # CHK-1 judges the arity
    found = {p: a for p, a in zip(placeholders, call.args, strict=False) if isinstance(a, Node)}
    returned = callee.graph.output_node().args[0]
    if isinstance(returned, Node):
        return found | {call: returned}
    for user in call.users:
        k = user.args[1] if user.target is operator.getitem else None
        if isinstance(returned, tuple | list) and isinstance(k, int) and k < len(returned):
            element = returned[k]
            found |= {user: element} if isinstance(element, Node) else {}
    return found


def _operands(call: Node, db: AliasDB, origins: Mapping[Node, Node]) -> Verdict:
    seen: dict[StorageClass, Node] = {}
    for operand in _operand_nodes(call):
        if operand in seen.values():  # a value with storage, passed before
            return Violated(f"CHK-18: {operand.name} is passed as two operands")
        for cls in sorted(db.classes(operand)):
            other = seen.setdefault(cls, operand)
            one_tuple = _one_tuple(_origin(other, origins), _origin(operand, origins))
            if other is not operand and not one_tuple:
                return Violated(f"CHK-18: operands {other.name} and {operand.name} share storage")
    return HOLDS


def _saved_then_written(call: Node, db: AliasDB, grad_enabled: bool) -> Verdict:
    """CHK-22: no node after a call that saves its operands writes one of them."""
    operands = list(_operand_nodes(call))
    if not saves_operands(operands, grad_enabled):
        return HOLDS
    for operand in operands:
        for cls in sorted(db.classes(operand)):
            later = [w for w in db.writers(cls) if db.rank[w] > db.rank[call]]
            if later:
                return Violated(f"CHK-22: {later[0].name} writes operand {operand.name} after "
                                f"the call, which saved it for backward")  # fmt: skip
    return HOLDS


def _operand_nodes(call: Node) -> Iterator[Node]:
    yield from (a for a in call.args[2:] if isinstance(a, Node))


def _origin(node: Node, origins: Mapping[Node, Node]) -> Node:
    """The node `node` carries, followed through partitions to one no partition passes on."""
    while node in origins:
        node = origins[node]
    return node


def _one_tuple(a: Node, b: Node) -> bool:
    """Both are getitems of one tuple-valued node (torch passes a tuple's elements so)."""
    getitems = a.target is operator.getitem and b.target is operator.getitem
    return getitems and a.args[0] is b.args[0]


def _results(body: object) -> Verdict:
    if not isinstance(body, torch.fx.GraphModule):
        return HOLDS  # CHK-1's other rules say what is wrong with the call
    db = AliasDB(body.graph)
    inputs = {c: n for n in body.graph.find_nodes(op="placeholder") for c in db.classes(n)}
    output = next(n for n in body.graph.nodes if n.op == "output")
    for k, result in enumerate(_result_nodes(output)):
        shared = sorted(db.classes(result) & inputs.keys())
        if shared:
            return Violated(f"CHK-18: result {k} ({result.name}) shares storage with operand "
                            f"{inputs[shared[0]].name}")  # fmt: skip
    return HOLDS


def _result_nodes(output: Node) -> list[Node]:
    found: list[Node] = []
    torch.fx.map_arg(output.args, found.append)
    return found
