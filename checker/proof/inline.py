"""Inlining: every `invoke_subgraph` call and every `call_module` of a `GraphModule` is replaced
by the body it runs, giving one flat list of nodes in execution order (spec chapter 06, CHK-3).

`flatten(gm)` walks the graph in order. A call binds the callee's placeholders to its operands
and inlines the callee's nodes in place of the call; the call's value is the callee's output
(a tuple for `invoke_subgraph`), and a `getitem` on it selects an element without producing a
node. Every other node becomes a `FlatNode`: its op, its target (`qualified_name`), its
constants (the args and kwargs with each node argument replaced by a marker) and its inputs (the
flat indices of its node arguments, kwargs sorted by name). Top-level placeholders are
identified by position and target. Malformed calls raise `InlineError`.
This module touches torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensor

from reference.bodies import body_key
from reference.names import INVOKE, qualified_name

Node = torch.fx.Node
NODE_MARK = ("node",)  # constants are 2-tuples, so the marker never equals one


class InlineError(Exception):
    """The module cannot be flattened (a malformed call); the message says where."""


@dataclass(frozen=True, slots=True)
class Ref:
    """The value of flat node `index`."""

    index: int


@dataclass(frozen=True, slots=True, eq=False)
class Callee:
    """A `get_attr` of a graph module: not a node of its own, only called."""

    target: str
    gm: torch.fx.GraphModule


Value: TypeAlias = "Ref | Callee | tuple[Value, ...]"


@dataclass(frozen=True, slots=True)
class FlatNode:
    """One node of the flat graph; `name` is prefixed by the calls it was inlined through."""

    name: str
    op: str
    target: str
    consts: Hashable
    inputs: tuple[int, ...]
    grad_free: bool = False  # its value cannot carry gradients (bool or integer, CHK-4)


@dataclass(frozen=True, slots=True, eq=False)
class FlatGraph:
    """Nodes in execution order, the output structure, and each kept top-level node's index."""

    nodes: tuple[FlatNode, ...]
    output: Hashable  # the output's structure, node values as markers
    outputs: tuple[int, ...]  # the flat indices of the output's node values, in order
    origin: Mapping[Node, int]


def flatten(gm: torch.fx.GraphModule) -> FlatGraph:
    """The flat graph of `gm` with every call of a graph module inlined (CHK-3)."""
    flattener = _Flattener()
    env, output = flattener.run(gm, None, "", ())
    inputs: list[int] = []
    structure = encode_arg(output.args[0], env, inputs)
    return FlatGraph(tuple(flattener.nodes), structure, tuple(inputs), flattener.origin)


def const_key(value: Any) -> Hashable:
    """A hashable, deterministic key of a constant argument: `(kind, value)`."""
    if value is None or isinstance(value, bool | int | float | complex | str):
        return (type(value).__name__, repr(value))
    if isinstance(value, torch.dtype | torch.device | torch.layout | torch.memory_format):
        return (type(value).__name__, str(value))
    if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
        return (type(value).__name__, str(value.node.expr))
    if isinstance(value, torch.Tensor):
        small = value.numel() <= 64 and not value.is_meta and not isinstance(value, FakeTensor)
        content = tuple(value.detach().flatten().tolist()) if small else tuple(value.shape)
        return ("tensor", (str(value.dtype), content))
    if value is Ellipsis:
        return ("ellipsis", "...")
    if callable(value):
        return ("callable", qualified_name(value))
    try:
        return ("opaque", (type(value).__qualname__, hash(value), value))
    except TypeError:  # unhashable: compared by type only (documented in CHK-3)
        return ("opaque", type(value).__qualname__)


def _encode(value: Value, inputs: list[int]) -> Hashable:
    match value:
        case Ref(index):
            inputs.append(index)
            return NODE_MARK
        case Callee(_, gm):
            return ("callee", body_key(gm))  # bodies by what they compute (RPL-20)
        case tuple():
            return ("tuple", tuple(_encode(v, inputs) for v in value))


def encode_arg(arg: Any, env: Mapping[Node, Value], inputs: list[int]) -> Hashable:
    """The key of an argument: nodes become markers (their indices go to `inputs`)."""
    if isinstance(arg, Node):
        return _encode(env[arg], inputs)
    if isinstance(arg, tuple | list):
        return (type(arg).__name__, tuple(encode_arg(a, env, inputs) for a in arg))
    if isinstance(arg, dict):
        items = sorted(arg.items(), key=lambda kv: str(kv[0]))
        return ("dict", tuple((str(k), encode_arg(v, env, inputs)) for k, v in items))
    if isinstance(arg, slice):
        parts = (arg.start, arg.stop, arg.step)
        return ("slice", tuple(encode_arg(p, env, inputs) for p in parts))
    return const_key(arg)


class _Flattener:
    """The nodes emitted so far and the origin of the top-level ones (state of one flatten)."""

    def __init__(self) -> None:
        self.nodes: list[FlatNode] = []
        self.origin: dict[Node, int] = {}
        self._active: list[torch.fx.GraphModule] = []

    def run(
        self,
        gm: torch.fx.GraphModule,
        operands: Sequence[Value] | None,
        prefix: str,
        kwargs: Sequence[tuple[str, Value]],
    ) -> tuple[dict[Node, Value], Node]:
        """Emit `gm`'s nodes; placeholders take `operands` (None: the top level's inputs).
        Returns the values of `gm`'s nodes and its output node."""
        if any(active is gm for active in self._active):
            raise InlineError(f"{prefix}: a graph module calls itself")
        self._active.append(gm)
        env: dict[Node, Value] = {}
        bound = _Binding(operands, dict(kwargs), prefix)
        for node in gm.graph.nodes:
            if node.op == "output":
                self._active.pop()
                return env, node
            env[node] = self._visit(gm, node, env, bound)
        raise InlineError(f"{prefix or 'graph'}: no output node")

    def inline(
        self,
        gm: torch.fx.GraphModule,
        operands: Sequence[Value],
        prefix: str,
        kwargs: Sequence[tuple[str, Value]],
    ) -> Value:
        """Emit the callee's nodes; the call's value is what the callee returns."""
        env, output = self.run(gm, operands, prefix, kwargs)
        return _value_of(output.args[0], env)

    def _visit(
        self, gm: torch.fx.GraphModule, node: Node, env: Mapping[Node, Value], bound: _Binding
    ) -> Value:
        if node.op == "placeholder" and bound.operands is not None:
            return bound.take(node)
        if node.op == "get_attr" and isinstance(_resolve(gm, node), torch.fx.GraphModule):
            return Callee(str(node.target), _resolve(gm, node))
        if node.op == "call_function" and node.target is INVOKE:
            return self._invoke(node, env, bound.prefix)
        if node.op == "call_function" and node.target is operator.getitem:
            found = _static_getitem(node, env)
            if found is not None:
                return found
        if node.op == "call_module" and isinstance(_resolve(gm, node), torch.fx.GraphModule):
            return self._call_module(gm, node, env, bound.prefix)
        return self._emit(node, env, bound)

    def _invoke(self, node: Node, env: Mapping[Node, Value], prefix: str) -> Value:
        if len(node.args) < 2 or not isinstance(node.args[0], Node) or node.kwargs:
            raise InlineError(f"{prefix}{node.name}: invoke_subgraph(subgraph, name, *operands)")
        callee = env[node.args[0]]
        if not isinstance(callee, Callee):
            raise InlineError(f"{prefix}{node.name}: operand 0 is not a get_attr of a subgraph")
        operands = [_value_of(a, env) for a in node.args[2:]]
        return self.inline(callee.gm, operands, f"{prefix}{node.name}/", ())

    def _call_module(
        self, gm: torch.fx.GraphModule, node: Node, env: Mapping[Node, Value], prefix: str
    ) -> Value:
        callee = _resolve(gm, node)
        operands = [_value_of(a, env) for a in node.args]
        kwargs = [(str(k), _value_of(v, env)) for k, v in node.kwargs.items()]
        return self.inline(callee, operands, f"{prefix}{node.name}/", kwargs)

    def _emit(self, node: Node, env: Mapping[Node, Value], bound: _Binding) -> Value:
        inputs: list[int] = []
        args = encode_arg(tuple(node.args), env, inputs)
        kwargs = encode_arg(dict(node.kwargs), env, inputs)
        if node.op == "placeholder":  # top level: the calling convention is position + name
            target = f"graph input {bound.take_position()} ({node.target})"
        elif node.op == "call_function":
            target = qualified_name(node.target)
        else:
            target = str(node.target)
        index = len(self.nodes)
        self.nodes.append(FlatNode(bound.prefix + node.name, node.op, target, (args, kwargs),
                                   tuple(inputs), grad_free(node)))  # fmt: skip
        if not bound.prefix:
            self.origin[node] = index
        return Ref(index)


def grad_free(node: Node) -> bool:
    """Whether the node's value cannot carry gradients: bool or integer tensors, ints, SymInts
    (a mask, an index, a size). Unknown metadata counts as able to (CHK-4)."""
    value = node.meta.get("example_value", node.meta.get("val"))
    leaves = value if isinstance(value, tuple | list) else (value,)
    if not leaves or any(v is None for v in leaves):
        return False
    return all(_grad_free_value(v) for v in leaves)


def _grad_free_value(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return not (value.dtype.is_floating_point or value.dtype.is_complex)
    return isinstance(value, bool | int | torch.SymInt | torch.SymBool)


class _Binding:
    """The operands of one inlined call, handed to its placeholders in order."""

    def __init__(
        self, operands: Sequence[Value] | None, kwargs: Mapping[str, Value], prefix: str
    ) -> None:
        self.operands, self.kwargs, self.prefix = operands, kwargs, prefix
        self.position = 0

    def take_position(self) -> int:
        self.position += 1
        return self.position - 1

    def take(self, node: Node) -> Value:
        assert self.operands is not None, "CHK-3: only inlined calls bind operands"
        position = self.take_position()
        if position < len(self.operands):
            return self.operands[position]
        if str(node.target) in self.kwargs:
            return self.kwargs[str(node.target)]
        raise InlineError(
            f"{self.prefix}{node.name}: no operand for placeholder {position} "
            f"({len(self.operands)} given)"
        )


def attribute(module: torch.nn.Module, target: str) -> Any:
    """The object a `get_attr`/`call_module` target names below `module`, or None."""
    value: Any = module
    for atom in target.split("."):
        value = getattr(value, atom, None)
    return value


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


def _value_of(arg: Any, env: Mapping[Node, Value]) -> Value:
    """An operand or an output: a node's value, or a tuple of them."""
    if isinstance(arg, Node):
        return env[arg]
    if isinstance(arg, tuple | list):
        return tuple(_value_of(a, env) for a in arg)
    raise InlineError(f"a call operand or output is the constant {type(arg).__name__}")
