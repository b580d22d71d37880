"""Meaning forms: what a graph computes, not where its nodes stand (spec chapter 08, DIF-3).

Two graphs of one captured model mean the same when every output is the same expression over
the graph inputs and their effects happen in the same order. A node's form is interned
(hash-consed) in one table shared by both graphs: its op, its target (qualified name), its
constants, the forms of its node arguments *as they are at that point* (after the in-place
updates so far), and the global state it runs in (grad mode and the autocast stack, by value).
What is free is forgotten: node names and positions, the order of nodes with no effect between
them, the order of an `invoke_subgraph`'s operands and outputs (a call's outputs are its body's,
formed on the operands' forms and marked as coming out of a call, so a region outlined and one
left inline differ), the numbering of a split's submodules (their bodies are inlined), dead
nodes (an unused `get_attr` of a refused group), redundant global-state switches. What is not
free is kept: effects (in-place updates, random ops) form one chain, each holding the previous
one's form, and a read after an update sees the updated version. This module touches torch
objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from reference.deps import AUTOCAST_TARGETS, GRAD_MODE_TARGET
from reference.keys import flat_node_args
from reference.mutation import mutated_positions
from reference.names import INVOKE, qualified_name

Node = torch.fx.Node
Form = int  # an interned form: equal ints, equal meaning
RANDOM = ("rand", "dropout", "bernoulli", "normal", "multinomial", "randperm")


class Malformed(Exception):
    """A graph that means nothing: a node used outside its graph or before its definition (a
    subgraph reading its caller's node). Which side is wrong is the judge's to say (CHK-1)."""


@dataclass(frozen=True, slots=True)
class Ref:
    """A node argument, by the form of its value."""

    form: Form


@dataclass(frozen=True, slots=True, eq=False)
class Body:
    """A `get_attr` of a graph module: formed where it is called."""

    gm: torch.fx.GraphModule


Value = Ref | Body | tuple[Any, ...]


class Interner:
    """One table of forms shared by the graphs being compared."""

    def __init__(self) -> None:
        self._ids: dict[Hashable, Form] = {}

    def __call__(self, key: Hashable) -> Form:
        return self._ids.setdefault(key, len(self._ids))


def meaning(gm: torch.fx.GraphModule, interner: Interner) -> tuple[Hashable, Form]:
    """(the outputs' forms, the last effect's form) of `gm`, in `interner`'s table (DIF-3)."""
    walker = _Walker(interner)
    count = len(gm.graph.find_nodes(op="placeholder"))
    outputs = walker.run(gm, [Ref(interner(("input", k))) for k in range(count)])
    return _key(outputs), walker.effect


class _Walker:
    """The forms of a graph's nodes. `effect` is the form of the chain of effects so far;
    `grad` and `autocast` the global state in force; `versions` maps a value's form to its form
    after the in-place updates so far."""

    def __init__(self, interner: Interner) -> None:
        self.intern = interner
        self.effect: Form = interner(("start",))
        self.grad: Hashable = ("caller's",)
        self.autocast: tuple[Hashable, ...] = ()
        self.versions: dict[Form, Form] = {}

    def run(self, gm: torch.fx.GraphModule, operands: Sequence[Any]) -> Any:
        """The values of `gm`'s outputs, its placeholders bound to `operands`."""
        env: dict[Node, Any] = {}
        bound = iter(operands)
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                env[node] = next(bound, None)
            elif node.op == "output":
                return self.now(_map(node.args[0], env))
            else:
                env[node] = self.visit(gm, node, env)
        return ()

    def now(self, value: Any) -> Any:
        """`value` with every form as it is after the in-place updates so far."""
        if isinstance(value, Ref):
            return Ref(self.versions.get(value.form, value.form))
        if isinstance(value, tuple | list):
            return tuple(self.now(v) for v in value)
        if isinstance(value, dict):
            return {k: self.now(v) for k, v in value.items()}
        return value

    def visit(self, gm: torch.fx.GraphModule, node: Node, env: Mapping[Node, Any]) -> Any:
        if node.op == "get_attr":
            found = _attribute(gm, str(node.target))
            if isinstance(found, torch.fx.GraphModule):
                return Body(found)
            return Ref(self.intern(("attr", str(node.target))))
        if node.op == "call_function" and node.target is INVOKE:
            return self.call(node, env)
        if node.op == "call_module":
            callee = _attribute(gm, str(node.target))
            if isinstance(callee, torch.fx.GraphModule):  # a split's partition: inlined
                return self.run(callee, [self.now(_map(a, env)) for a in node.args])
        if node.op == "call_function" and node.target is operator.getitem:
            source = env.get(node.args[0]) if isinstance(node.args[0], Node) else None
            if isinstance(source, tuple) and isinstance(node.args[1], int):
                return source[node.args[1]]
        if node.op == "call_function" and node.target in (GRAD_MODE_TARGET, *AUTOCAST_TARGETS):
            self.switch(node, env)
            return Ref(self.intern(("switch",)))
        return Ref(self.compute(node, env))

    def compute(self, node: Node, env: Mapping[Node, Any]) -> Form:
        """What the node computes from its arguments' current forms in the state in force; an
        effect is chained after the previous one, and a value it updates takes a new version."""
        target = node.target if isinstance(node.target, str) else qualified_name(node.target)
        args = _key(self.now(_map((node.args, tuple(sorted(node.kwargs.items()))), env)))
        form = self.intern((node.op, target, args, ("state", self.grad, self.autocast)))
        if not _is_effect(node):
            return form
        form = self.intern(("effect", form, self.effect))
        self.effect = form
        inputs = flat_node_args(node)
        for position in mutated_positions(node):
            before = self.now(env[inputs[position]])
            if isinstance(before, Ref):
                self.versions[before.form] = self.intern(("after", before.form, form))
        return form

    def switch(self, node: Node, env: Mapping[Node, Any]) -> None:
        """A global-state switch sets the state by value: a redundant one changes nothing."""
        consts = _key(_map(node.args, env))
        if node.target is GRAD_MODE_TARGET:
            self.grad = consts
        elif node.target is AUTOCAST_TARGETS[0]:
            self.autocast = (*self.autocast, consts)
        else:
            self.autocast = self.autocast[:-1]

    def call(self, node: Node, env: Mapping[Node, Any]) -> tuple[Ref, ...]:
        """An `invoke_subgraph`: its body formed on the operands' forms, each output marked as
        coming out of a call (so that an outlined region differs from an inline one)."""
        body = _map(node.args[0], env)
        assert isinstance(body, Body), "CHK-1: the callee is a get_attr of a graph module"
        inner = self.run(body.gm, [self.now(_map(a, env)) for a in node.args[2:]])
        flat = _flat(inner if isinstance(inner, tuple) else (inner,))
        return tuple(Ref(self.intern(("call output", _key(v)))) for v in flat)


def _attribute(gm: torch.fx.GraphModule, target: str) -> object:
    found: object = gm
    for part in target.split("."):
        found = getattr(found, part, None)
    return found


def _is_effect(node: Node) -> bool:
    """In-place updates, and random ops (they draw from the global generator)."""
    if mutated_positions(node):
        return True
    name = node.target if isinstance(node.target, str) else qualified_name(node.target)
    return any(word in name for word in RANDOM)


def _map(value: Any, env: Mapping[Node, Any]) -> Any:
    """`value` with every node replaced by its value in `env`; `Malformed` for a node not
    defined before it in its graph."""
    if isinstance(value, Node):
        if value not in env:
            raise Malformed(f"{value.name} is used where it is not defined (CHK-1)")
        return env[value]
    if isinstance(value, tuple | list):
        return tuple(_map(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, env) for k, v in value.items()}
    return value


def _flat(value: Any) -> list[Any]:
    if isinstance(value, tuple | list):
        return [x for v in value for x in _flat(v)]
    return [value]


def _key(value: Any) -> Hashable:
    """A hashable, deterministic key of a value whose nodes are already forms."""
    if isinstance(value, Ref):
        return ("value", value.form)
    if isinstance(value, Body):
        return ("body",)
    if isinstance(value, tuple | list):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((str(k), _key(v)) for k, v in value.items()))
    if isinstance(value, torch.dtype | torch.device | torch.layout | torch.memory_format):
        return (type(value).__name__, str(value))
    if callable(value):
        return ("callable", qualified_name(value))
    return (type(value).__name__, repr(value))
