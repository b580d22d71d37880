"""Inlining: one walk that replaces every call of a graph module by the body it runs (spec
chapter 06, CHK-3 and CHK-6).

`inline(gm, modules)` walks `gm` in execution order. An `invoke_subgraph` call (and, with
`modules=True`, a `call_module` of a graph module) binds the callee's placeholders to its
operands and walks the callee in place of the call; the call's value is what the callee returns,
and a `getitem` on it selects an element without producing a node. Every other node is *emitted*,
once per time it runs, with the values of its node arguments. `checker.proof.flat.flatten`
builds the flat graph of CHK-3, CHK-4 and the oracle's meaning form from the emissions; CHK-6
runs the same calls' bodies directly (`checker.proof.numeric.BodiesRun`). A malformed call raises
`InlineError`.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, TypeAlias

import torch
import torch.fx

from reference.fx_helpers import attribute
from reference.names import INVOKE

Node = torch.fx.Node


class InlineError(Exception):
    """The module cannot be inlined (a malformed call); the message says where."""


@dataclass(frozen=True, slots=True)
class Ref:
    """The value of emitted node `index`."""

    index: int


@dataclass(frozen=True, slots=True, eq=False)
class Callee:
    """A `get_attr` of a graph module: not a node of its own, only called. `path` is its
    attribute path from the top-level module."""

    target: str
    path: str
    gm: torch.fx.GraphModule


Value: TypeAlias = "Ref | Callee | tuple[Value, ...]"


@dataclass(frozen=True, slots=True, eq=False)
class Emitted:
    """One run of `node`: `args` the values of its node arguments, `path` the attribute path
    of its module (`""`, `"subgraph_0."`), `prefix` its name prefix (`"invoke_subgraph_1/"`),
    `invokes` the `invoke_subgraph` calls it runs in, `position` a top-level placeholder's."""

    node: Node
    args: Mapping[Node, Value]
    path: str
    prefix: str
    invokes: tuple[str, ...]
    position: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Inlined:
    """Every emission in execution order, the top level's values and output node."""

    emitted: tuple[Emitted, ...]
    env: Mapping[Node, Value]
    output: Node


def inline(gm: torch.fx.GraphModule, *, modules: bool) -> Inlined:
    """The emissions of `gm` with every `invoke_subgraph` (and with `modules`, every
    `call_module` of a graph module) inlined, recursively."""
    walk = _Walk(modules)
    env, output = walk.run(gm, _Scope(None, "", "", ()))
    return Inlined(tuple(walk.emitted), env, output)


@dataclass(frozen=True, slots=True)
class _Scope:
    """Where a walk is: the operands of the call (None at the top), the attribute path, the
    name prefix and the enclosing `invoke_subgraph` calls."""

    operands: Sequence[Value] | None
    path: str
    prefix: str
    invokes: tuple[str, ...]
    kwargs: Mapping[str, Value] = dataclass_field(default_factory=dict)


class _Walk:
    """The emissions so far, and the graph modules being walked (to refuse recursion)."""

    def __init__(self, modules: bool) -> None:
        self.modules = modules
        self.emitted: list[Emitted] = []
        self._active: list[torch.fx.GraphModule] = []

    def run(self, gm: torch.fx.GraphModule, scope: _Scope) -> tuple[dict[Node, Value], Node]:
        """Walk `gm`'s nodes; returns their values and its output node."""
        if any(active is gm for active in self._active):
            raise InlineError(f"{scope.prefix}: a graph module calls itself")
        self._active.append(gm)
        env: dict[Node, Value] = {}
        bound = _Binding(scope)
        for node in gm.graph.nodes:
            if node.op == "output":
                self._active.pop()
                return env, node
            env[node] = self._visit(gm, node, env, bound)
        raise InlineError(f"{scope.prefix or 'graph'}: no output node")

    def _visit(
        self, gm: torch.fx.GraphModule, node: Node, env: Mapping[Node, Value], bound: _Binding
    ) -> Value:
        scope = bound.scope
        if node.op == "placeholder" and scope.operands is not None:
            return bound.take(node)
        if node.op == "get_attr" and isinstance(_resolve(gm, node), torch.fx.GraphModule):
            return Callee(str(node.target), f"{scope.path}{node.target}", _resolve(gm, node))
        if node.op == "call_function" and node.target is INVOKE:
            return self._invoke(node, env, scope)
        if node.op == "call_function" and node.target is operator.getitem:
            found = _static_getitem(node, env)
            if found is not None:
                return found
        callee = _resolve(gm, node) if node.op == "call_module" else None
        if self.modules and isinstance(callee, torch.fx.GraphModule):
            return self._call_module(node, callee, env, scope)
        return self._emit(node, env, bound)

    def _invoke(self, node: Node, env: Mapping[Node, Value], scope: _Scope) -> Value:
        where = f"{scope.prefix}{node.name}"
        if len(node.args) < 2 or not isinstance(node.args[0], Node) or node.kwargs:
            raise InlineError(f"{where}: invoke_subgraph(subgraph, name, *operands)")
        callee = env[node.args[0]]
        if not isinstance(callee, Callee):
            raise InlineError(f"{where}: operand 0 is not a get_attr of a subgraph")
        operands = [value_of(a, env) for a in node.args[2:]]
        inner = _Scope(operands, callee.path + ".", where + "/", (*scope.invokes, where))
        return self._returned(callee.gm, inner)

    def _call_module(
        self, node: Node, callee: torch.fx.GraphModule, env: Mapping[Node, Value], scope: _Scope
    ) -> Value:
        operands = [value_of(a, env) for a in node.args]
        kwargs = {str(k): value_of(v, env) for k, v in node.kwargs.items()}
        path, prefix = f"{scope.path}{node.target}.", f"{scope.prefix}{node.name}/"
        return self._returned(callee, _Scope(operands, path, prefix, scope.invokes, kwargs))

    def _returned(self, gm: torch.fx.GraphModule, scope: _Scope) -> Value:
        env, output = self.run(gm, scope)
        return value_of(output.args[0], env)

    def _emit(self, node: Node, env: Mapping[Node, Value], bound: _Binding) -> Value:
        scope = bound.scope
        missing = next((a for a in node.all_input_nodes if a not in env), None)
        if missing is not None:  # a subgraph reading its caller's node, a use before definition
            where = f"{scope.prefix}{node.name}"
            raise InlineError(f"{where} uses {missing.name} where it is not defined (CHK-1)")
        args = {a: env[a] for a in node.all_input_nodes}
        position = bound.take_position() if node.op == "placeholder" else None
        record = Emitted(node, args, scope.path, scope.prefix, scope.invokes, position)
        self.emitted.append(record)
        return Ref(len(self.emitted) - 1)


class _Binding:
    """The operands of one inlined call, handed to its placeholders in order."""

    def __init__(self, scope: _Scope) -> None:
        self.scope = scope
        self.position = 0

    def take_position(self) -> int:
        self.position += 1
        return self.position - 1

    def take(self, node: Node) -> Value:
        positional, named = self.scope.operands, self.scope.kwargs
        assert positional is not None, "CHK-3: only inlined calls bind operands"
        position = self.take_position()
        if position < len(positional):
            return positional[position]
        if str(node.target) in named:
            return named[str(node.target)]
        raise InlineError(
            f"{self.scope.prefix}{node.name}: no operand for placeholder {position} "
            f"({len(positional)} given)"
        )


def _resolve(gm: torch.nn.Module, node: Node) -> Any:
    value = attribute(gm, str(node.target))
    if value is None:
        raise InlineError(f"{node.name}: {node.op} target {node.target} does not exist")
    return value


def _static_getitem(node: Node, env: Mapping[Node, Value]) -> Value | None:
    """The element a getitem selects from an inlined call's tuple, or None for a real node."""
    source, index = node.args[0], node.args[1] if len(node.args) > 1 else None
    value = env.get(source) if isinstance(source, Node) else None
    if not isinstance(value, tuple):
        return None
    if not isinstance(index, int) or not -len(value) <= index < len(value):
        raise InlineError(f"{node.name}: index {index} of a call returning {len(value)} values")
    return value[index]


def value_of(arg: Any, env: Mapping[Node, Value]) -> Value:
    """An operand or an output: a node's value, or a tuple of them."""
    if isinstance(arg, Node):
        return env[arg]
    if isinstance(arg, tuple | list):
        return tuple(value_of(a, env) for a in arg)
    raise InlineError(f"a call operand or output is the constant {type(arg).__name__}")
