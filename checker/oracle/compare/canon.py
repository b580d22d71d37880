"""Canonical forms for the differential oracle (spec chapter 08, DIF-3 and DIF-4).

Two implementations agree on a graph when the canonical forms of their outputs are equal.
A canonical form forgets what carries no meaning: node names (a node argument is printed as
`%i`, its position in its graph), placeholder names, and a `get_attr` of a subgraph that nothing
uses (torch leaves one for a fully refused group, RPL-5). It keeps what does: ops, targets
(printed by `qualified_name`), constants (by `repr`, so `0.5` and `2.0` differ), the wiring,
the node order, and every `GraphModule` child the graph uses, by attribute name.

Region groups are compared by node names: both sides capture the same model file, and Dynamo
names nodes deterministically. `region_faults` says what makes a group wrong whatever the other
side found: a node in two regions, or corresponding nodes that compute different things.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.fx

from reference.fx_helpers import attribute, target_name
from reference.names import qualified_name

Node = torch.fx.Node
RegionGroups = tuple[tuple[tuple[str, ...], ...], ...]


@dataclass(frozen=True, slots=True)
class CanonNode:
    """`op target(args)` with node arguments by position."""

    op: str
    target: str
    args: str

    def __str__(self) -> str:
        return f"{self.op} {self.target}({self.args})"


@dataclass(frozen=True, slots=True)
class CanonGraph:
    """A graph's nodes in order, then the graph-module children it uses, by name."""

    nodes: tuple[CanonNode, ...]
    modules: tuple[tuple[str, CanonGraph], ...]


def canonical_graph(gm: torch.fx.GraphModule) -> CanonGraph:
    """The canonical form of `gm` and, recursively, of the graph modules it uses (DIF-3)."""
    dead = dynamo_dead_nodes(gm.graph)
    kept = [n for n in gm.graph.nodes if n not in dead]
    index = {n: i for i, n in enumerate(kept)}
    nodes = tuple(_canon_node(n, index) for n in kept)
    used: dict[str, None] = {}
    for n in kept:
        if n.op in ("get_attr", "call_module") and isinstance(_child(gm, n), torch.fx.GraphModule):
            used.setdefault(str(n.target))
    modules = tuple(
        (name, canonical_graph(cast(torch.fx.GraphModule, attribute(gm, name)))) for name in used
    )
    return CanonGraph(nodes, modules)


def _child(gm: torch.fx.GraphModule, node: Node) -> object:
    return attribute(gm, str(node.target))


def dynamo_dead_nodes(graph: torch.fx.Graph) -> set[Node]:
    """The nodes Dynamo's clean-up after the dedup pass removes (`remove_unused_graphargs`):
    unused get_attrs (e.g. of a subgraph whose regions were all refused, RPL-5), getitems,
    size accessors and SymInt arithmetic, transitively. The reference runs on the graph
    Dynamo hands the backend, torch's pass on the graph before that clean-up."""
    from torch.fx.experimental.symbolic_shapes import is_accessor_node

    dead: set[Node] = set()
    for node in reversed(list(graph.nodes)):
        if any(user not in dead for user in node.users) or node.op in ("placeholder", "output"):
            continue
        symbolic = isinstance(node.meta.get("example_value"), torch.SymInt | torch.SymBool)
        if (
            node.op == "get_attr"
            or (node.op == "call_function" and (node.target is operator.getitem or symbolic))
            or is_accessor_node(node)
        ):
            dead.add(node)
    return dead


def _canon_node(node: Node, index: Mapping[Node, int]) -> CanonNode:
    args = [render(a, index) for a in node.args]
    args += [f"{k}={render(v, index)}" for k, v in node.kwargs.items()]
    target = "" if node.op == "placeholder" else target_name(node)
    return CanonNode(node.op, target, ", ".join(args))


def render(value: Any, index: Mapping[Node, int]) -> str:
    """A node argument as text: nodes by position, containers element-wise, constants by
    `repr` (floats keep every digit), tensors by shape and dtype, callables by name."""
    match value:
        case torch.fx.Node():
            return f"%{index[value]}" if value in index else f"%?{value.name}"
        case tuple() | list() | dict() | slice():
            return _render_container(value, index)
        case None | bool() | int() | float() | str():
            return repr(value)
        case torch.dtype() | torch.memory_format() | torch.layout():
            return str(value)
        case torch.device():
            return f"device({str(value)!r})"
        case torch.Tensor():
            return f"tensor{tuple(value.shape)}:{value.dtype}"
        case _ if callable(value):
            return qualified_name(value)
        case _:
            return f"<{type(value).__qualname__}>"


def _render_container(value: Any, index: Mapping[Node, int]) -> str:
    match value:
        case tuple():
            inner = ", ".join(render(v, index) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        case list():
            return "[" + ", ".join(render(v, index) for v in value) + "]"
        case dict():
            return "{" + ", ".join(f"{k!r}: {render(v, index)}" for k, v in value.items()) + "}"
    parts = (value.start, value.stop, value.step)
    return "slice(" + ", ".join(render(p, index) for p in parts) + ")"


def first_difference(a: CanonGraph, b: CanonGraph, labels: tuple[str, str]) -> str:
    """Where `a` and `b` first differ, in one line (empty when they are equal)."""
    if a == b:
        return ""
    for i, (x, y) in enumerate(zip(a.nodes, b.nodes, strict=False)):
        if x != y:
            return f"node {i}: {labels[0]} `{x}`, {labels[1]} `{y}`"
    if len(a.nodes) != len(b.nodes):
        return f"{labels[0]} has {len(a.nodes)} nodes, {labels[1]} {len(b.nodes)}"
    names = ([n for n, _ in a.modules], [n for n, _ in b.modules])
    if names[0] != names[1]:
        return f"modules: {labels[0]} {names[0]}, {labels[1]} {names[1]}"
    for (name, x_sub), (_, y_sub) in zip(a.modules, b.modules, strict=True):
        inner = first_difference(x_sub, y_sub, labels)
        if inner:
            return f"{name}: {inner}"
    return ""


def only_order_differs(a: CanonGraph, b: CanonGraph) -> bool:
    """Same children and the same multiset of (op, target) at the top: a reordering (DIF-4)."""

    def ops(g: CanonGraph) -> Counter[tuple[str, str]]:
        return Counter((n.op, n.target) for n in g.nodes)

    return a.modules == b.modules and ops(a) == ops(b)


def region_faults(gm: torch.fx.GraphModule, groups: RegionGroups) -> tuple[str, ...]:
    """What is wrong with `groups` over `gm`'s nodes, whatever another side found (DIF-4):
    an unknown node, a node in two regions, or two corresponding nodes with different ops,
    targets, constants or input metadata."""
    by_name = {n.name: n for n in gm.graph.nodes}
    faults: list[str] = []
    owner: dict[str, str] = {}
    for g, group in enumerate(groups):
        for r, region in enumerate(group):
            for name in region:
                if name not in by_name:
                    faults.append(f"group {g} region {r}: no node {name}")
                elif name in owner:
                    faults.append(f"{name} is in {owner[name]} and in group {g} region {r}")
                owner.setdefault(name, f"group {g} region {r}")
        faults += _unequal_positions(g, group, by_name)
    return tuple(faults)


def bucket_faults(gm: torch.fx.GraphModule, buckets: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Buckets of a tracker's key that hold nodes computing different things (DIF-4)."""
    by_name = {n.name: n for n in gm.graph.nodes}
    faults = []
    for bucket in buckets:
        found = [by_name[name] for name in bucket if name in by_name]
        nodes = [n for n in found if n.op not in ("placeholder", "get_attr")]  # never in regions
        if not nodes:
            continue
        sigs = [node_signature(n) for n in nodes]
        faults += [f"{n.name} `{s}` shares a key with {nodes[0].name} `{sigs[0]}`"
                   for n, s in zip(nodes, sigs, strict=True) if s != sigs[0]]  # fmt: skip
    return tuple(faults)


def _unequal_positions(
    g: int, group: Sequence[Sequence[str]], by_name: Mapping[str, Node]
) -> list[str]:
    faults = []
    for position in zip(*group, strict=False):
        if not all(name in by_name for name in position):
            continue
        sigs = [node_signature(by_name[name]) for name in position]
        for r, sig in enumerate(sigs[1:], start=1):
            if sig != sigs[0]:
                faults.append(f"group {g}: {position[r]} `{sig}` is not {position[0]} `{sigs[0]}`")
    return faults


def node_signature(node: Node) -> str:
    """What a node computes from its inputs: op, target, constants and input metadata."""
    meta = {a: _meta(a) for a in node.all_input_nodes}
    args = [_render_meta(a, meta) for a in node.args]
    args += [f"{k}={_render_meta(v, meta)}" for k, v in node.kwargs.items()]
    return f"{node.op} {target_name(node)}({', '.join(args)})"


def _render_meta(value: Any, meta: Mapping[Node, str]) -> str:
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_render_meta(v, meta) for v in value) + ")"
    if isinstance(value, torch.fx.Node):
        return meta[value]
    return render(value, {})


def _meta(node: Node) -> str:
    value = node.meta.get("example_value", node.meta.get("val"))
    if isinstance(value, torch.Tensor):
        grad = ", grad" if value.requires_grad else ""
        return f"T{tuple(str(s) for s in value.shape)}:{value.dtype}{grad}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_meta_value(v) for v in value) + ")"
    return _meta_value(value)


def _meta_value(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"T{tuple(str(s) for s in value.shape)}:{value.dtype}"
    return type(value).__name__


def order_faults(gm: torch.fx.GraphModule, deps: Mapping[Node, Sequence[Node]]) -> str:
    """Why `gm`'s node order is not a valid order for its data and `deps` (empty if it is):
    a node before one of its inputs or extra dependencies, or the output not last (DIF-5)."""
    nodes = list(gm.graph.nodes)
    position = {n: i for i, n in enumerate(nodes)}
    outputs = [n for n in nodes if n.op == "output"]
    if outputs and outputs[-1] is not nodes[-1]:
        return f"the output is node {position[outputs[-1]]} of {len(nodes)}, not the last"
    for node in nodes:
        for dep in (*node.all_input_nodes, *deps.get(node, ())):
            if dep not in position:
                return f"{node.name} depends on {dep.name}, which is not in the graph"
            if position[dep] > position[node]:
                return f"{node.name} comes before its dependency {dep.name}"
    return ""
