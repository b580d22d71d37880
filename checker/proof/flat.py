"""The flat graph: the nodes a module runs, calls inlined, each with its effects (spec chapter
06, CHK-3 and CHK-4; the effects are chapter 09's).

`flatten(gm)` builds it from `inline(gm, modules=True)`. A flat node is (op, target, constants,
inputs): the target printed by `qualified_name`, the constants = args and kwargs with each node
argument replaced by a marker (kwargs sorted by name), the inputs = flat indices of the node
arguments in the same order. A top-level placeholder's target is its position and name. Each
flat node also carries its effects (chapter 09) translated to flat indices: which inputs it
writes, which input leaves its value shares storage with, whether it draws. Inlined nodes are
named `call/inner` and know the `invoke_subgraph` calls they run in.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from checker.proof.inline import Callee, Emitted, Ref, Value, inline
from reference.effects.alias_db import StorageClasses
from reference.effects.node_effects import (
    Storages,
    aliases,
    draws,
    storage_of,
    value_leaves,
    writes,
)
from reference.fx_helpers import arg_key, example_value, flat_node_args, target_name
from reference.replace.bodies import body_key

Node = torch.fx.Node
NODE_MARK = ("node",)  # constants are 2-tuples, so the marker never equals one
LeafRef = tuple[int, int]  # (flat index, leaf of its value)


@dataclass(frozen=True, slots=True)
class FlatNode:
    """One node of the flat graph; `name` is prefixed by the calls it was inlined through."""

    name: str
    op: str
    target: str
    consts: Hashable
    inputs: tuple[int, ...]
    grad_free: bool = False  # its value cannot carry gradients (bool or integer, CHK-4)
    writes: tuple[int, ...] = ()  # flat indices of the inputs it writes (EFF-1)
    aliases: tuple[tuple[LeafRef, ...], ...] = ()  # per value leaf, what it shares (EFF-2)
    draws: bool = False  # it draws from the global random generator (EFF-4)
    invokes: tuple[str, ...] = ()  # the `invoke_subgraph` calls it runs in


@dataclass(frozen=True, slots=True, eq=False)
class FlatGraph:
    """Nodes in execution order, the output structure, and each kept top-level node's index."""

    nodes: tuple[FlatNode, ...]
    output: Hashable  # the output's structure, node values as markers
    outputs: tuple[int, ...]  # the flat indices of the output's node values, in order
    origin: Mapping[Node, int]

    def storage_classes(self) -> StorageClasses[int]:
        """The storage classes of the flat nodes' values, and what each reads and writes
        (chapter 09's alias DB over flat indices)."""
        found: StorageClasses[int] = StorageClasses()
        for i, node in enumerate(self.nodes):
            found.add(i, node.aliases, node.inputs, node.writes, node.draws)
        return found


def structural_key(node: FlatNode, inputs: Sequence[Hashable]) -> Hashable:
    """What a flat node computes from its inputs, given a form for each input: op, target,
    constants and those forms. The one notion of "the same computation" that CHK-3 pairs by
    (inputs: their classes) and the oracle's meaning form builds on (inputs: their forms)."""
    return (node.op, node.target, node.consts, tuple(inputs))


def flatten(gm: torch.fx.GraphModule) -> FlatGraph:
    """The flat graph of `gm` with every call of a graph module inlined (CHK-3)."""
    inlined = inline(gm, modules=True)
    roots: dict[Hashable, int] = {}
    facts = _EffectsMemo()  # a body's nodes run once per call: what they do is read once
    nodes = tuple(_flat_node(i, e, roots, facts) for i, e in enumerate(inlined.emitted))
    outputs: list[int] = []
    structure = encode_arg(inlined.output.args[0], inlined.env, outputs)
    origin = {e.node: i for i, e in enumerate(inlined.emitted) if not e.prefix}
    return FlatGraph(nodes, structure, tuple(outputs), origin)


@dataclass(frozen=True, slots=True)
class _Local:
    """What a node does wherever its graph is inlined (chapter 09), relative to its flat
    arguments: read once per node."""

    grad_free: bool
    writes: tuple[int, ...]  # EFF-1, positions
    aliases: tuple[tuple[tuple[int, int], ...], ...]  # EFF-2, (position, leaf) per leaf
    draws: bool  # EFF-4


class _EffectsMemo:
    """Each node's `_Local`, and each value's storages, read once per flatten."""

    def __init__(self) -> None:
        self.known: Storages = {}
        self.local: dict[Node, _Local] = {}

    def of(self, node: Node) -> _Local:
        if node not in self.local:
            aliased = () if node.op in ("placeholder", "get_attr") else aliases(node, self.known)
            self.local[node] = _Local(grad_free(node), writes(node), aliased, draws(node))
        return self.local[node]


def _flat_node(index: int, e: Emitted, roots: dict[Hashable, int], facts: _EffectsMemo) -> FlatNode:
    node, local = e.node, facts.of(e.node)
    inputs: list[int] = []
    args = encode_arg(tuple(node.args), e.args, inputs)
    consts = (args, encode_arg(dict(node.kwargs), e.args, inputs))
    return FlatNode(
        name=e.prefix + node.name,
        op=node.op,
        target=_target(e),
        consts=consts,
        inputs=tuple(inputs),
        grad_free=local.grad_free,
        writes=_written(e, local.writes),
        aliases=_root_aliases(index, e, roots) if _is_root(e) else _aliases(e, local.aliases),
        draws=local.draws,
        invokes=e.invokes,
    )


def _target(e: Emitted) -> str:
    node = e.node
    if node.op == "placeholder":  # top level: the calling convention is position + name
        return f"graph input {e.position} ({node.target})"
    return target_name(node)


def _is_root(e: Emitted) -> bool:
    return e.node.op in ("placeholder", "get_attr")


def _refs(value: Value) -> list[int]:
    """The flat indices a value is made of, in order."""
    if isinstance(value, Ref):
        return [value.index]
    if isinstance(value, tuple):
        return [i for v in value for i in _refs(v)]
    return []


def _written(e: Emitted, positions: tuple[int, ...]) -> tuple[int, ...]:
    if not positions:
        return ()
    args = flat_node_args(e.node)
    found = [i for p in positions if p < len(args) for i in _refs(e.args[args[p]])]
    return tuple(dict.fromkeys(found))


def _aliases(
    e: Emitted, local: tuple[tuple[tuple[int, int], ...], ...]
) -> tuple[tuple[LeafRef, ...], ...]:
    args = flat_node_args(e.node)
    found: list[tuple[LeafRef, ...]] = []
    for own in local:
        refs: list[LeafRef] = []
        for position, leaf in own:
            value = e.args[args[position]]
            indices = _refs(value)
            if isinstance(value, Ref):
                refs.append((value.index, leaf))
            elif leaf < len(indices):  # a leaf of a call's returned tuple
                refs.append((indices[leaf], 0))
        found.append(tuple(refs))
    return tuple(found)


def _root_aliases(
    index: int, e: Emitted, roots: dict[Hashable, int]
) -> tuple[tuple[LeafRef, ...], ...]:
    """A graph input's leaves: each shares the class of the first earlier input leaf of the
    same storage (or, without an example value, of the same attribute path)."""
    leaves = value_leaves(example_value(e.node))
    keys: list[Hashable] = [f"{e.path}{e.node.target}"] if leaves is None else []
    keys += [storage_of(t) for t in leaves or ()]
    found: list[tuple[LeafRef, ...]] = []
    for k, key in enumerate(keys):
        first = roots.setdefault(key, index)
        found.append(((first, k),) if first != index else ())
    return tuple(found)


def encode_arg(arg: Any, env: Mapping[Node, Value], inputs: list[int]) -> Hashable:
    """The key of an argument: nodes become markers (their indices go to `inputs`), a called
    body its structure (RPL-20), constants `fx_helpers.const_key`."""
    return arg_key(arg, lambda node: _encode(env[node], inputs))


def _encode(value: Value, inputs: list[int]) -> Hashable:
    match value:
        case Ref(index):
            inputs.append(index)
            return NODE_MARK
        case Callee(_, _, gm):
            return ("callee", body_key(gm))  # bodies by what they compute (RPL-20)
        case tuple():
            return ("tuple", tuple(_encode(v, inputs) for v in value))


def grad_free(node: Node) -> bool:
    """Whether the node's value cannot carry gradients: bool or integer tensors, ints, SymInts
    (a mask, an index, a size). Unknown metadata counts as able to (CHK-4)."""
    value = example_value(node)
    leaves = value if isinstance(value, tuple | list) else (value,)
    if not leaves or any(v is None for v in leaves):
        return False
    return all(_grad_free_value(v) for v in leaves)


def _grad_free_value(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return not (value.dtype.is_floating_point or value.dtype.is_complex)
    return isinstance(value, bool | int | torch.SymInt | torch.SymBool)
