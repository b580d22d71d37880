"""Dependencies preserved: the flat transformed graph computes what the original computes, node
for node, and in an order that keeps the original's ordering dependencies (spec chapter 06,
CHK-3 and CHK-4).

CHK-3 uses canonical hashing (hash-consing): a node's class is the interned tuple (op, target,
constants, classes of its inputs), computed in graph order with ONE intern table for both
graphs. Equal classes compute the same value from the same graph inputs. Nodes of one class
are paired in graph order; every node must be paired, and the outputs must have equal classes.
The witness is the first unpaired node of the original, with the nearest transformed node and
what differs, or the first extra node of the transformed graph.

CHK-4 takes the original's ordering dependencies (`OrderingDeps.from_graph`, mutated positions
from `track_graph`) and checks each edge between paired nodes in the flat order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import torch
import torch.fx

from checker.inline import NODE_MARK, FlatGraph, FlatNode
from checker.verdict import Holds, Unknown, Verdict, Violated
from reference.deps import AUTOCAST_TARGETS, GRAD_MODE_TARGET, OrderingDeps
from reference.tracker import track_graph

Node = torch.fx.Node


@dataclass(frozen=True, slots=True)
class Matching:
    """Original flat index -> transformed flat index, and the CHK-3 verdict."""

    pairs: Mapping[int, int]
    verdict: Verdict


def render(flat: FlatGraph, index: int) -> str:
    """`name = target(args)` with node arguments by flat name (for witnesses)."""
    node = flat.nodes[index]
    if node.op == "placeholder":
        return f"{node.name} = {node.target}"
    names = iter(flat.nodes[i].name for i in node.inputs)
    return f"{node.name} = {node.target}{render_consts(node.consts, names)}"


def render_consts(consts: Hashable, names: Iterator[str]) -> str:
    """`(a, 2, dim=0)` from a node's constants, markers replaced by the next names."""
    return "(" + ", ".join(render_parts(consts, names)) + ")"


def render_parts(consts: Hashable, names: Iterator[str]) -> list[str]:
    """Each argument of `render_consts`, keyword arguments as `name=value`."""
    assert isinstance(consts, tuple), "CHK-3: node constants are (args, kwargs)"
    args, kwargs = consts
    parts = [_render(a, names) for a in args[1]]
    return parts + [f"{k}={_render(v, names)}" for k, v in kwargs[1]]


def _render(key: Hashable, names: Iterator[str]) -> str:
    assert isinstance(key, tuple), "CHK-3: keys are tuples"
    if key == NODE_MARK:
        return next(names)
    kind, value = key
    if kind in ("tuple", "list"):
        inner = ", ".join(_render(v, names) for v in value)
        return f"({inner})" if kind == "tuple" else f"[{inner}]"
    if kind == "slice":
        return "slice(" + ", ".join(_render(v, names) for v in value) + ")"
    if kind in ("opaque", "tensor", "dict"):
        return f"<{kind}>"
    return str(value)


def classes(flat: FlatGraph, table: dict[Hashable, int]) -> list[int]:
    """The class of every flat node; `table` interns keys and is shared between graphs."""
    found: list[int] = []
    for node in flat.nodes:
        key = (node.op, node.target, node.consts, tuple(found[i] for i in node.inputs))
        found.append(table.setdefault(key, len(table)))
    return found


def match_graphs(original: FlatGraph, transformed: FlatGraph) -> Matching:
    """Pair every node of `original` with one of `transformed` (CHK-3)."""
    table: dict[Hashable, int] = {}
    ours, theirs = classes(original, table), classes(transformed, table)
    skip_ours, skip_theirs = noop_switches(original), noop_switches(transformed)
    free: dict[int, deque[int]] = {}
    for j, c in enumerate(theirs):
        if j not in skip_theirs:
            free.setdefault(c, deque()).append(j)
    pairs: dict[int, int] = {}
    for i, c in enumerate(ours):
        if i not in skip_ours and free.get(c):
            pairs[i] = free[c].popleft()
    return Matching(pairs, _verdict(original, transformed, pairs, (ours, theirs)))


def _verdict(
    original: FlatGraph,
    transformed: FlatGraph,
    pairs: Mapping[int, int],
    cls: tuple[Sequence[int], Sequence[int]],
) -> Verdict:
    nodes = original.nodes
    lost = next((i for i, n in enumerate(nodes) if i not in pairs and not _projection(n)), None)
    if lost is not None:
        return Violated(f"CHK-3: {_explain(original, transformed, lost, pairs)}")
    taken = set(pairs.values())
    theirs = transformed.nodes
    present = set(cls[0])
    extra = next(
        (
            j
            for j, n in enumerate(theirs)
            if j not in taken
            and not _projection(n)
            and not _replicated_state(n, cls[1][j], present)
        ),
        None,
    )
    if extra is not None:
        return Violated(f"CHK-3: extra node {render(transformed, extra)} has no original")
    outs, their_outs = original.outputs, transformed.outputs
    if original.output != transformed.output or len(outs) != len(their_outs):
        return Violated("CHK-3: the graph outputs have a different structure")
    for k, (i, j) in enumerate(zip(outs, their_outs, strict=True)):
        if cls[0][i] != cls[1][j]:
            found, wanted = transformed.nodes[j].name, original.nodes[i].name
            return Violated(f"CHK-3: output {k} is {found}, which does not compute {wanted}")
    return Holds()


STATE_TARGETS = (
    "torch._C._set_grad_enabled",
    "torch.amp.autocast_mode._enter_autocast",
    "torch.amp.autocast_mode._exit_autocast",
)


def noop_switches(flat: FlatGraph) -> frozenset[int]:
    """Global-state switches that change nothing (split's preludes and epilogues, SPL-9): a grad
    switch to the mode already in force, and an autocast exit immediately re-entered with the
    same arguments. They are neither paired nor missed (CHK-3), so the original switches pair
    with the original switches (CHK-4)."""
    mode: Hashable = None
    found: set[int] = set()
    for i, node in enumerate(flat.nodes):
        if node.target == STATE_TARGETS[0]:
            if node.consts == mode:
                found.add(i)
            mode = node.consts
        elif node.target == STATE_TARGETS[2]:
            found.update(_reentered(flat, i))
    return frozenset(found)


def _reentered(flat: FlatGraph, exit_index: int) -> tuple[int, ...]:
    """(exit, enter) when the next computing node after the exit re-enters the same autocast."""
    nodes = flat.nodes
    closed = nodes[exit_index].inputs
    if len(closed) != 1:
        return ()
    j = exit_index + 1
    while j < len(nodes) and _projection(nodes[j]):
        j += 1
    same = j < len(nodes) and nodes[j].target == STATE_TARGETS[1]
    if same and nodes[j].consts == nodes[closed[0]].consts:
        return (exit_index, j)
    return ()


def _replicated_state(node: FlatNode, cls: int, original_classes: set[int]) -> bool:
    """A copy of a global-state switch the original also makes (split's preludes and
    epilogues, SPL-9): it re-establishes a state, it computes nothing (CHK-3)."""
    return node.target in STATE_TARGETS and cls in original_classes


def _projection(node: FlatNode) -> bool:
    """A getitem computes nothing: unpaired, it is not a difference by itself (its users or the
    outputs are, if its value matters)."""
    return node.op == "call_function" and node.target == "operator.getitem"


def _explain(original: FlatGraph, transformed: FlatGraph, i: int, pairs: Mapping[int, int]) -> str:
    """Why original node `i` has no counterpart: the nearest candidate and the difference.

    Candidates are unpaired transformed nodes of the same op with the same target or a shared
    (paired) input; the nearest has the same target, then a shared input, then equal constants.
    """
    node = original.nodes[i]
    mapped = {pairs[k] for k in node.inputs if k in pairs}
    taken = set(pairs.values())

    def distance(j: int) -> tuple[bool, bool, bool]:
        other = transformed.nodes[j]
        shared = bool(mapped & set(other.inputs))
        return (other.target != node.target, not shared, other.consts != node.consts)

    candidates = [
        j
        for j, other in enumerate(transformed.nodes)
        if j not in taken and other.op == node.op and distance(j)[:2] != (True, True)
    ]
    head = f"no counterpart for {render(original, i)}"
    if not candidates:
        return head
    j = min(candidates, key=distance)
    why = _difference(original, transformed, (i, j), pairs)
    return f"{head}; nearest {render(transformed, j)}: {why}"


def _difference(
    original: FlatGraph, transformed: FlatGraph, ij: tuple[int, int], pairs: Mapping[int, int]
) -> str:
    a, b = original.nodes[ij[0]], transformed.nodes[ij[1]]
    if a.target != b.target:
        return f"target {b.target} instead of {a.target}"
    if a.consts != b.consts:
        return _constant_difference(a.consts, b.consts)
    if len(a.inputs) != len(b.inputs):
        return f"{len(b.inputs)} node arguments instead of {len(a.inputs)}"
    for k, (x, y) in enumerate(zip(a.inputs, b.inputs, strict=True)):
        if pairs.get(x) != y:
            wanted = original.nodes[x].name
            return f"node argument {k} is {transformed.nodes[y].name}, not the copy of {wanted}"
    return "an argument differs"


def _constant_difference(a: Hashable, b: Hashable) -> str:
    """The first constant argument that differs, e.g. `alpha=0.25 instead of alpha=4.0`."""
    ours, theirs = render_parts(a, repeat("_")), render_parts(b, repeat("_"))
    for mine, other in zip(ours, theirs, strict=False):
        if mine != other:
            return f"{other} instead of {mine}"
    return f"{len(theirs)} arguments instead of {len(ours)}"


def check_ordering(
    original: torch.fx.GraphModule,
    flat: tuple[FlatGraph, FlatGraph],
    pairs: Mapping[int, int],
) -> Verdict:
    """Every ordering dependency of the original holds in the flat transformed order (CHK-4).

    An edge with an unpaired end cannot be checked: the verdict is then Unknown, unless some
    checkable edge is violated.
    """
    mutated = track_graph(original.graph).node_to_mutated_arg_positions
    positions = {n: tuple(p) for n, p in mutated.items()}
    deps = OrderingDeps.from_graph(original.graph, positions)
    source, target = flat
    unpaired = 0
    for node in original.graph.nodes:
        for dep in deps.deps_of(node):
            a, b = source.origin.get(node), source.origin.get(dep)
            if a is None or b is None:
                continue  # inside a subgraph of the original: not an outer dependency
            if a not in pairs or b not in pairs:
                unpaired += 1
            elif pairs[a] < pairs[b]:
                late, early = target.nodes[pairs[a]].name, target.nodes[pairs[b]].name
                return Violated(
                    f"CHK-4: {node.name} must follow {dep.name} ({_kind(node, dep)}), "
                    f"but {late} runs before {early}"
                )
    if unpaired:
        return Unknown(f"CHK-4: {unpaired} ordering dependencies involve unpaired nodes")
    return Holds()


def _kind(node: Node, dep: Node) -> str:
    pins = (*AUTOCAST_TARGETS, GRAD_MODE_TARGET)
    if any(n.target is t for n in (node, dep) for t in pins):
        return "global-state pin"
    return "mutation order"
