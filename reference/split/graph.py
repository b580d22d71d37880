"""Read an fx graph into the plain facts that split planning needs (spec chapter 05, SPL).

This is the torch edge of the split: it resolves attributes, recognises the global-state calls
(`_set_grad_enabled`, `_enter_autocast`, `_exit_autocast`), reads symbolic sizes from
`meta["example_value"]` and calls the user's split callback. Everything downstream (`state`,
`partition_order`, `repair`, `plan`, `build`) works on the `SplitGraph` made here, by index.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NewType, cast

import sympy
import torch
import torch.fx
from torch.fx.experimental.symbolic_shapes import free_symbols

from reference.errors import FxOracleError
from reference.fx_helpers import NodeIndex, attribute
from reference.sort.deps import OrderingDeps

PartitionId = NewType("PartitionId", int)


class NodeKind(enum.Enum):
    """What a node is to the split: only `CALL` nodes are partitioned (SPL-1)."""

    PLACEHOLDER = "placeholder"
    VALUE_ATTR = "value_attr"  # get_attr of a parameter, buffer or plain tensor: passed in
    MODULE_ATTR = "module_attr"  # get_attr of an nn.Module: copied into the submodule
    CALL = "call"  # call_function, call_method, call_module
    OUTPUT = "output"


class StateOp(enum.Enum):
    """The global-state calls whose effect spans partitions (SPL-9)."""

    SET_GRAD = "set_grad"
    ENTER_AUTOCAST = "enter_autocast"
    EXIT_AUTOCAST = "exit_autocast"


_STATE_TARGETS: tuple[tuple[object, StateOp], ...] = (
    (torch._C._set_grad_enabled, StateOp.SET_GRAD),
    (torch.amp.autocast_mode._enter_autocast, StateOp.ENTER_AUTOCAST),
    (torch.amp.autocast_mode._exit_autocast, StateOp.EXIT_AUTOCAST),
)


@dataclass(frozen=True, slots=True)
class SymbolUse:
    """A free symbol of a node's example value and the first node that binds it, if any."""

    name: str
    definer: NodeIndex | None


@dataclass(frozen=True, slots=True)
class SplitNode:
    """One node as the planner sees it.

    `inputs` are the node's distinct node arguments, args before kwargs, in first-occurrence
    order (fx's `all_input_nodes`). `symbols` are the free symbols of `meta["example_value"]`,
    sorted by name. `closes` is, for an `_exit_autocast`, the `_enter_autocast` it closes;
    `grad_enabled` is, for a `_set_grad_enabled`, the mode it sets. `after` are the nodes
    it must follow because of what they write, read or draw (chapter 09, SPL-15).
    """

    name: str
    kind: NodeKind
    inputs: tuple[NodeIndex, ...] = ()
    state: StateOp | None = None
    symbols: tuple[SymbolUse, ...] = ()
    closes: NodeIndex | None = None
    grad_enabled: bool | None = None
    after: tuple[NodeIndex, ...] = ()  # the nodes it must follow besides its inputs


@dataclass(frozen=True, slots=True)
class SplitGraph:
    """The nodes of a graph in graph order; `NodeIndex` is the position."""

    nodes: tuple[SplitNode, ...]

    def indices(self, kind: NodeKind) -> tuple[NodeIndex, ...]:
        """The nodes of one kind, in graph order."""
        return tuple(NodeIndex(i) for i, n in enumerate(self.nodes) if n.kind is kind)


def resolve_attr(gm: torch.nn.Module, qualname: str) -> Any:
    """The object a get_attr or call_module target names on `gm`, else `FxOracleError`."""
    value = attribute(gm, qualname)
    if value is None:
        raise FxOracleError(f"node target {qualname} not found on the module")
    return value


def node_kind(gm: torch.fx.GraphModule, node: torch.fx.Node) -> NodeKind:
    """Classify a node; a get_attr is a module attr when its value is an `nn.Module`."""
    if node.op == "placeholder":
        return NodeKind.PLACEHOLDER
    if node.op == "output":
        return NodeKind.OUTPUT
    if node.op == "get_attr":
        value = resolve_attr(gm, cast(str, node.target))
        return NodeKind.MODULE_ATTR if isinstance(value, torch.nn.Module) else NodeKind.VALUE_ATTR
    return NodeKind.CALL


def state_op(node: torch.fx.Node) -> StateOp | None:
    """The global-state call this node is, if any (compared by identity, never by name)."""
    found = (op for target, op in _STATE_TARGETS if node.target is target)
    return next(found, None) if node.op == "call_function" else None


def bound_symbol(node: torch.fx.Node) -> str | None:
    """The symbol a node's value is, when its example value is a bare SymInt/SymFloat symbol."""
    value = node.meta.get("example_value")
    if isinstance(value, (torch.SymInt, torch.SymFloat)):
        expr = value.node.expr
        if isinstance(expr, sympy.Symbol):
            return str(expr)
    return None


def symbol_names(node: torch.fx.Node) -> tuple[str, ...]:
    """Free symbols of `meta["example_value"]`, sorted by name (SPL-6)."""
    value = node.meta.get("example_value")
    if value is None:
        return ()
    return tuple(sorted(str(s) for s in free_symbols(value)))


def _check_state_node(node: torch.fx.Node, op: StateOp) -> None:
    """The argument shapes torch asserts for global-state calls."""
    if op is StateOp.SET_GRAD and (len(node.args) != 1 or not isinstance(node.args[0], bool)):
        raise FxOracleError(f"{node.name}: _set_grad_enabled must take one Python bool")
    if op is StateOp.ENTER_AUTOCAST and node.all_input_nodes:
        raise FxOracleError(f"{node.name}: _enter_autocast arguments must be constants")
    if op is StateOp.EXIT_AUTOCAST and len(node.args) != 1:
        raise FxOracleError(f"{node.name}: _exit_autocast must take the enter node only")


def read_graph(gm: torch.fx.GraphModule) -> SplitGraph:
    """The facts of every node of `gm.graph`, in graph order."""
    nodes = list(gm.graph.nodes)
    index = {node: NodeIndex(i) for i, node in enumerate(nodes)}
    definers: dict[str, NodeIndex] = {}
    for node in nodes:  # the first binder wins, so placeholders do (SPL-6)
        symbol = bound_symbol(node)
        if symbol is not None and symbol not in definers:
            definers[symbol] = index[node]
    effects = OrderingDeps.of_effects(gm.graph)
    return SplitGraph(tuple(_node_facts(gm, node, index, definers, effects) for node in nodes))


def _node_facts(
    gm: torch.fx.GraphModule,
    node: torch.fx.Node,
    index: dict[torch.fx.Node, NodeIndex],
    definers: dict[str, NodeIndex],
    effects: OrderingDeps,
) -> SplitNode:
    op = state_op(node)
    closes = None
    if op is not None:
        _check_state_node(node, op)
        if op is StateOp.EXIT_AUTOCAST:
            enter = node.args[0]
            if (
                not isinstance(enter, torch.fx.Node)
                or state_op(enter) is not StateOp.ENTER_AUTOCAST
            ):
                raise FxOracleError(f"{node.name}: _exit_autocast must close an _enter_autocast")
            closes = index[enter]
    return SplitNode(
        name=node.name,
        kind=node_kind(gm, node),
        inputs=tuple(index[a] for a in node.all_input_nodes),
        state=op,
        symbols=tuple(SymbolUse(s, definers.get(s)) for s in symbol_names(node)),
        closes=closes,
        grad_enabled=cast(bool, node.args[0]) if op is StateOp.SET_GRAD else None,
        after=tuple(index[d] for d in effects.deps_of(node)),
    )


def assign_partitions(
    gm: torch.fx.GraphModule,
    facts: SplitGraph,
    split_callback: Callable[[torch.fx.Node], int],
) -> tuple[PartitionId | None, ...]:
    """Call `split_callback` exactly once per partitioned node, in graph order (SPL-1).

    Unpartitioned nodes get `None`. A result that is not an `int` (a bool included) is bad input.
    """
    result: list[PartitionId | None] = []
    for node, fact in zip(gm.graph.nodes, facts.nodes, strict=True):
        if fact.kind is not NodeKind.CALL:
            result.append(None)
            continue
        pid: object = split_callback(node)
        if not isinstance(pid, int) or isinstance(pid, bool):
            raise FxOracleError(
                f"split_callback returned {pid!r} ({type(pid).__name__}) for node {node.name}; "
                "it must return an int partition id"
            )
        result.append(PartitionId(pid))
    return tuple(result)
