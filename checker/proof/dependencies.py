"""Dependencies preserved: the flat transformed graph computes what the original computes, node
for node, and in an order that keeps the original's ordering dependencies (spec chapter 06,
CHK-3 and CHK-4).

CHK-3 uses canonical hashing (hash-consing): a node's class is the interned tuple (op, target,
constants, classes of its inputs), computed in graph order with ONE intern table for both
graphs. Equal classes compute the same value from the same graph inputs. Nodes of one class
are paired in graph order, a partner in the same global state first; every computing node must
be paired but dead code (a value that reaches no output and no effect, RPL-27), and the outputs
must have equal classes. Global-state switches compute no value:
they are not paired, and CHK-4 judges them by the state every node runs in. The witness is the
first unpaired node of the original, with the nearest transformed node and what differs, or the
first extra node of the transformed graph.

CHK-4 takes the original's mutation-order dependencies (`OrderingDeps.from_graph`, mutated
positions from `track_graph`) and checks each edge between paired nodes in the flat order; then
it compares global states node for node (`checker.proof.global_state`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import torch
import torch.fx

from checker.proof.flat import FlatGraph, FlatNode, structural_key
from checker.proof.flat_render import render, render_parts
from checker.proof.global_state import check_states, is_switch, states
from checker.proof.verdict import HOLDS, Holds, Unknown, Verdict, Violated
from reference.names import qualified_name
from reference.sort.deps import OrderingDeps


@dataclass(frozen=True, slots=True)
class Matching:
    """Original flat index -> transformed flat index, and the CHK-3 verdict."""

    pairs: Mapping[int, int]
    verdict: Verdict


def classes(flat: FlatGraph, table: dict[Hashable, int]) -> list[int]:
    """The class of every flat node; `table` interns keys and is shared between graphs."""
    found: list[int] = []
    for node in flat.nodes:
        key = structural_key(node, [found[i] for i in node.inputs])
        found.append(table.setdefault(key, len(table)))
    return found


def match_graphs(original: FlatGraph, transformed: FlatGraph) -> Matching:
    """Pair every computing node of `original` with one of `transformed` (CHK-3).

    Global-state switches are left out: what they do is checked as the state each node runs in
    (CHK-4). Among nodes of one class, a partner running in the same global state is preferred,
    then graph order decides.
    """
    table: dict[Hashable, int] = {}
    ours, theirs = classes(original, table), classes(transformed, table)
    our_states, their_states = states(original)[0], states(transformed)[0]
    pairs: dict[int, int] = {}
    for same_state in (True, False):
        free: dict[Hashable, deque[int]] = {}
        taken = set(pairs.values())
        for j, c in enumerate(theirs):
            if j not in taken and not is_switch(transformed.nodes[j]):
                key = (c, their_states[j]) if same_state else c
                free.setdefault(key, deque()).append(j)
        for i, c in enumerate(ours):
            key = (c, our_states[i]) if same_state else c
            if i not in pairs and not is_switch(original.nodes[i]) and free.get(key):
                pairs[i] = free[key].popleft()
    return Matching(pairs, _verdict(original, transformed, pairs, (ours, theirs)))


def _verdict(
    original: FlatGraph,
    transformed: FlatGraph,
    pairs: Mapping[int, int],
    cls: tuple[Sequence[int], Sequence[int]],
) -> Verdict:
    nodes, theirs = original.nodes, transformed.nodes
    dead = dead_indices(original)
    unpaired = (i for i, n in enumerate(nodes) if i not in pairs and i not in dead)
    lost = next((i for i in unpaired if _computes(nodes[i])), None)
    if lost is not None:
        return Violated(f"CHK-3: {_explain(original, transformed, lost, pairs)}")
    taken = set(pairs.values())
    extra = next((j for j, n in enumerate(theirs) if j not in taken and _computes(n)), None)
    if extra is not None:
        return Violated(f"CHK-3: extra node {render(transformed, extra)} has no original")
    outs, their_outs = original.outputs, transformed.outputs
    if original.output != transformed.output or len(outs) != len(their_outs):
        return Violated("CHK-3: the graph outputs have a different structure")
    for k, (i, j) in enumerate(zip(outs, their_outs, strict=True)):
        if cls[0][i] != cls[1][j]:
            found, wanted = transformed.nodes[j].name, original.nodes[i].name
            return Violated(f"CHK-3: output {k} is {found}, which does not compute {wanted}")
    return HOLDS


# fx's side-effectful functions (asserts, `_check`s): never dead, whatever reads them
_IMPURE = frozenset(qualified_name(f) for f in torch.fx.node._side_effectful_functions)


def dead_indices(flat: FlatGraph) -> frozenset[int]:
    """The flat nodes whose value reaches neither an output nor an effect (a write, a draw, a
    global-state switch, an assert): dead code, which a transformation may drop (RPL-27)."""
    effects = (i for i, n in enumerate(flat.nodes) if _effect(n))
    stack, live = [*flat.outputs, *effects], set()
    while stack:
        i = stack.pop()
        if i not in live:
            live.add(i)
            stack.extend(flat.nodes[i].inputs)
    return frozenset(range(len(flat.nodes))) - live


def _effect(node: FlatNode) -> bool:
    impure = node.target in _IMPURE or node.op in ("placeholder", "get_attr")
    return impure or bool(node.writes) or node.draws or is_switch(node)


def _computes(node: FlatNode) -> bool:
    """Whether an unpaired node is a difference by itself: a getitem computes nothing (its
    users or the outputs are the difference, if its value matters), and a global-state switch
    is judged by the states of the nodes it governs (CHK-4)."""
    projection = node.op == "call_function" and node.target == "operator.getitem"
    return not projection and not is_switch(node)


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


def live(flat: FlatGraph) -> set[int]:
    """The flat nodes whose value reaches an output or an effect (a write, a draw, a global-state
    switch); the rest is dead: where it runs changes nothing observable (CHK-4)."""
    stack = [*flat.outputs]
    stack += [i for i, n in enumerate(flat.nodes) if n.writes or n.draws or is_switch(n)]
    found: set[int] = set()
    while stack:
        i = stack.pop()
        if i not in found:
            found.add(i)
            stack.extend(flat.nodes[i].inputs)
    return found


def check_ordering(
    original: torch.fx.GraphModule,
    flat: tuple[FlatGraph, FlatGraph],
    pairs: Mapping[int, int],
) -> Verdict:
    """The original's mutation-order dependencies hold in the flat transformed order, and every
    paired node runs in its original global state (CHK-4).

    A mutation edge with an unpaired end cannot be checked: the verdict is then Unknown, unless
    something checkable is violated. An edge with a dead end (a value no output or effect uses,
    `live`) orders nothing anyone sees, and is not checked. Global-state pins are not checked as
    edges: the switches may be replicated and the partitions reordered (SPL-9), what counts is
    the state each node runs in (`checker.proof.global_state`).
    """
    deps = OrderingDeps.of_effects(original.graph)
    source, target = flat
    alive = live(source)
    unpaired = 0
    for node in original.graph.nodes:
        for dep in deps.deps_of(node):
            a, b = source.origin.get(node), source.origin.get(dep)
            if a is None or b is None or is_switch(source.nodes[a]) or is_switch(source.nodes[b]):
                continue  # inside a subgraph of the original, or a global-state pin
            if a not in alive or b not in alive:
                continue
            if a not in pairs or b not in pairs:
                unpaired += 1
            elif pairs[a] < pairs[b]:
                late, early = target.nodes[pairs[a]].name, target.nodes[pairs[b]].name
                return Violated(
                    f"CHK-4: {node.name} must follow {dep.name} (mutation order), "
                    f"but {late} runs before {early}"
                )
    state = check_states(source, target, pairs)
    if unpaired and isinstance(state, Holds):
        return Unknown(f"CHK-4: {unpaired} ordering dependencies involve unpaired nodes")
    return state
