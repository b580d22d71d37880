"""Structural summaries of torch's deduplicated graphs for the differential harness
(fxoracle issue 3; test infrastructure, no spec chapter of its own: chapter 03's differential
tests compare the reference's deduplication with these summaries).

A summary is plain data: subgraphs with their placeholders, bodies and returned names, the
`invoke_subgraph` calls with their operands, and every outer node in graph order. Targets are
printed by `qualified_name` and node arguments by name, never by address, so two summaries compare
with `==`. This module is a torch adapter: `Any` appears only where torch objects cross its edge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.fx

from reference.names import qualified_name


@dataclass(frozen=True, slots=True)
class NodeSummary:
    """One fx node: `name = op target(args)`, with node arguments printed by name."""

    name: str
    op: str
    target: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name} = {self.op} {self.target}({', '.join(self.args)})"


@dataclass(frozen=True, slots=True)
class SubgraphSummary:
    """One installed subgraph: its placeholders, body (in order) and returned node names."""

    name: str
    inputs: tuple[str, ...]
    body: tuple[NodeSummary, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class InvokeSummary:
    """One `invoke_subgraph` call: which subgraph, with which operand nodes."""

    name: str
    subgraph: str
    operands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DedupSummary:
    """A deduplicated graph module, structurally: subgraphs by name, invokes and every outer
    node in graph order."""

    subgraphs: tuple[SubgraphSummary, ...]
    invokes: tuple[InvokeSummary, ...]
    order: tuple[NodeSummary, ...]

    def subgraph(self, name: str) -> SubgraphSummary:
        """The subgraph called `name`."""
        found = [s for s in self.subgraphs if s.name == name]
        assert len(found) == 1, f"torch_side: no single subgraph named {name}"
        return found[0]

    def invokes_of(self, name: str) -> tuple[InvokeSummary, ...]:
        """The calls of subgraph `name`, in graph order."""
        return tuple(call for call in self.invokes if call.subgraph == name)


def summarize_dedup(gm: torch.fx.GraphModule) -> DedupSummary:
    """Summarize the output of `torch_dedup_graph` (or of any graph with invoke_subgraph)."""
    nodes = list(gm.graph.nodes)
    names = sorted(
        {str(n.target) for n in nodes if n.op == "get_attr" and _is_submodule(gm, n)},
        key=_natural_key,
    )
    invoke = torch.ops.higher_order.invoke_subgraph
    invokes = tuple(
        InvokeSummary(n.name, str(n.args[1]), tuple(_render(a) for a in n.args[2:]))
        for n in nodes
        if n.op == "call_function" and n.target is invoke
    )
    subgraphs = tuple(
        _summarize_subgraph(name, cast(torch.fx.GraphModule, getattr(gm, name))) for name in names
    )
    return DedupSummary(subgraphs, invokes, tuple(summarize_node(n) for n in nodes))


def _is_submodule(gm: torch.fx.GraphModule, node: torch.fx.Node) -> bool:
    return isinstance(getattr(gm, str(node.target), None), torch.fx.GraphModule)


def _natural_key(name: str) -> tuple[str, int]:
    stem, _, number = name.rpartition("_")
    return (stem, int(number)) if number.isdigit() else (name, -1)


def _summarize_subgraph(name: str, sub: torch.fx.GraphModule) -> SubgraphSummary:
    nodes = list(sub.graph.nodes)
    inputs = tuple(n.name for n in nodes if n.op == "placeholder")
    body = tuple(summarize_node(n) for n in nodes if n.op not in ("placeholder", "output"))
    (returned,) = (n.args[0] for n in nodes if n.op == "output")
    outputs = tuple(_render(item) for item in cast(Sequence[Any], returned))
    return SubgraphSummary(name, inputs, body, outputs)


def summarize_node(node: torch.fx.Node) -> NodeSummary:
    """`NodeSummary` of one node, target printed by `qualified_name`."""
    if node.op == "call_function":
        target = qualified_name(cast(Callable[..., object], node.target))
    else:
        target = str(node.target)
    args = tuple(_render(a) for a in node.args)
    kwargs = tuple(f"{key}={_render(value)}" for key, value in node.kwargs.items())
    return NodeSummary(node.name, node.op, target, args + kwargs)


def _render(value: object) -> str:
    """A node by name, containers element-wise, plain constants by `repr`; never an address."""
    match value:
        case torch.fx.Node():
            return value.name
        case tuple() | list():
            inner = ", ".join(_render(item) for item in value)
            return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
        case None | bool() | int() | float() | str() | torch.dtype() | torch.device():
            return repr(value)
        case _ if callable(value):
            return qualified_name(value)
        case _:
            return f"<{type(value).__qualname__}>"
