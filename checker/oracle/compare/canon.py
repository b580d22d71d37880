"""Canonical forms for the differential oracle (spec chapter 08, DIF-3, DIF-4, DIF-23).

The canonical form is the positional form `--strict-order` compares (the meaning form is
`checker.oracle.compare.meaning`). It forgets what carries no meaning: node names (a node
argument is printed as `%i`, its position in its graph), placeholder names, and a `get_attr` of
a subgraph that nothing uses (torch leaves one for a fully refused group, RPL-5). It keeps what
does: ops, targets (printed by `qualified_name`), constants (by `repr`, so `0.5` and `2.0`
differ), the wiring, the node order, and every `GraphModule` child the graph uses, by attribute
name. The *order-free* form (`order_free`) forgets the node order too: two graphs whose
order-free forms are equal differ only in order (the kind `order`, DIF-23).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.fx

from reference.fx_helpers import attribute, target_name
from reference.names import constant_text, qualified_name

Node = torch.fx.Node


@dataclass(frozen=True, slots=True)
class CanonNode:
    """`op target(args)`: node arguments by position in a `CanonGraph`, by their metadata in
    `faults.node_signature` (what a node computes from its inputs)."""

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
    """A node argument as text: nodes by position, containers element-wise, tensors by shape and
    dtype, devices as `device('cpu')`, other constants by `names.constant_text` (floats keep
    every digit), other callables by name."""
    match value:
        case torch.fx.Node():
            return f"%{index[value]}" if value in index else f"%?{value.name}"
        case tuple() | list() | dict() | slice():
            return _render_container(value, index)
        case torch.device():
            return f"device({str(value)!r})"
        case torch.Tensor():
            return f"tensor{tuple(value.shape)}:{value.dtype}"
    text = constant_text(value)
    if text is not None:
        return text[1]
    return qualified_name(value) if callable(value) else f"<{type(value).__qualname__}>"


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


def only_order_differs(a: torch.fx.GraphModule, b: torch.fx.GraphModule) -> bool:
    """The same nodes, wired the same, in another order (DIF-23): equal multisets of
    `order_free` forms, in one table. A node whose constant, target or wiring differs (a wrong
    getitem index, a permuted signature) differs."""
    table: dict[Hashable, int] = {}
    return order_free(a, table) == order_free(b, table)


def first_that_matters(
    a: torch.fx.GraphModule, b: torch.fx.GraphModule, labels: tuple[str, str]
) -> str:
    """The first difference a reader can act on: the first node (in each graph's order, a
    subgraph's fetch last) whose order-free form the other graph lacks; where both hold the
    same nodes, where their order first differs (`first_difference`)."""
    table: dict[Hashable, int] = {}
    forms = (free_forms(a, table), free_forms(b, table))
    lone = [_lone(forms[k], Counter(forms[1 - k].values())) for k in (0, 1)]
    if lone == [None, None]:
        return first_difference(canonical_graph(a), canonical_graph(b), labels)
    index = [{n: i for i, n in enumerate(f)} for f in forms]
    told = [
        f"{labels[k]} node {index[k][n]} `{_canon_node(n, index[k])}`"
        if n is not None
        else f"{labels[k]} nothing"
        for k, n in enumerate(lone)
    ]
    return f"first node only one side has: {told[0]}; {told[1]}"


def _lone(forms: dict[Node, int], other: Counter[int]) -> Node | None:
    """The first node of `forms` (in order; fetches of subgraphs after every other node) whose
    form `other` holds no more of."""
    left = Counter(other)
    unmatched = []
    for node, form in forms.items():
        if left[form] > 0:
            left[form] -= 1
        else:
            unmatched.append(node)
    unmatched.sort(key=lambda n: n.op == "get_attr")  # stable: graph order otherwise
    return unmatched[0] if unmatched else None


def order_free(gm: torch.fx.GraphModule, table: dict[Hashable, int]) -> Counter[int]:
    """The multiset of `gm`'s node forms (`free_forms`)."""
    return Counter(free_forms(gm, table).values())


def free_forms(gm: torch.fx.GraphModule, table: dict[Hashable, int]) -> dict[Node, int]:
    """`gm`'s node forms in order, interned in `table`: a node's form is its op, target and
    arguments with node arguments by *their* forms, not their positions; placeholders by their
    rank among placeholders (the signature keeps its order), a child graph module by its own
    order-free form. Dynamo's dead nodes are left out, as in `canonical_graph`."""
    dead = dynamo_dead_nodes(gm.graph)
    form: dict[Node, int] = {}
    placeholders = 0
    for node in gm.graph.nodes:
        if node in dead:
            continue
        if node.op == "placeholder":
            key: Hashable = ("placeholder", placeholders)
            placeholders += 1
        else:
            key = (node.op, _free_target(gm, node, table), _canon_node(node, form).args)
        form[node] = table.setdefault(key, len(table))
    return form


def _free_target(gm: torch.fx.GraphModule, node: Node, table: dict[Hashable, int]) -> Hashable:
    """A child graph module by its order-free form (its name is free), any other target by
    name."""
    child = _child(gm, node) if node.op in ("get_attr", "call_module") else None
    if isinstance(child, torch.fx.GraphModule):
        return frozenset(order_free(child, table).items())
    return target_name(node)
