"""Effects: what one node writes, which storage its value shares, which global state it
switches and whether it draws random numbers (spec chapter 09, EFF-1 to EFF-5).

These are the node-local facts every ordering question of fxoracle derives from: the reference's
ordering dependencies and refusals, split's partition order, the checker's ordering obligation and
the oracle's meaning form (`reference.effects.alias_db` lifts them to a graph). Each is stated
relative to the node's flat node arguments (`flat_node_args`), so the same facts hold for a node
wherever its graph is inlined.

- writes (EFF-1): the flat argument positions the node updates in place. Live capture records
  what version counters saw and running the node on fakes showed (`WRITES_META` on the node,
  EFF-9); otherwise the op tells: a schema's `Tensor(a!)`, a method whose name ends in `_`,
  `setitem` and the in-place operators, `inplace=True`, `out=`, the reviewed tables.
- aliases (EFF-2): per tensor leaf of the node's value, the argument leaves whose storage it
  shares, from example values; a value whose storage cannot be read may share any argument's;
  without an example value, a schema's `Tensor(a)` or a view method's name says so.
- switch (EFF-3): autocast, grad mode or a functorch transform's level changes;
- draws (EFF-4): the node draws from the global random generator. These two are in
  `reference.effects.switches`, re-exported here.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch._C._functorch import get_unwrapped, is_functorch_wrapped_tensor
from torch.multiprocessing.reductions import StorageWeakRef

# EFF-3 and EFF-4 live in `switches`; their names stay importable from here
from reference.effects.switches import AUTOCAST_TARGETS as AUTOCAST_TARGETS
from reference.effects.switches import FUNCTORCH_TARGETS as FUNCTORCH_TARGETS
from reference.effects.switches import GRAD_MODE_TARGET as GRAD_MODE_TARGET
from reference.effects.switches import RANDOM_NAMES as RANDOM_NAMES
from reference.effects.switches import SWITCHES as SWITCHES
from reference.effects.switches import Switch as Switch
from reference.effects.switches import draws as draws
from reference.effects.switches import switch as switch
from reference.effects.write_tables import in_tables, table_writes
from reference.fx_helpers import example_value, flat_node_args
from reference.names import qualified_name

Node = torch.fx.Node
LeafRef = tuple[int, int]  # (flat argument position, leaf of that argument's value)
WRITES_META = "fxoracle_writes"  # positions live capture saw written (EFF-1, EFF-9)
UNKNOWN_META = "fxoracle_writes_unknown"  # capture could not run the node or look it up (EFF-9)

_INPLACE_OPERATORS: frozenset[Callable[..., object]] = frozenset(
    {
        operator.setitem, operator.iadd, operator.isub, operator.imul, operator.itruediv,
        operator.ifloordiv, operator.imod, operator.ipow, operator.iand, operator.ior,
        operator.ixor, operator.ilshift, operator.irshift, operator.imatmul,
    }
)  # fmt: skip
WRITING_KWARGS = frozenset({"out", "inplace"})  # keyword arguments that make a node write


# -- EFF-1 writes ----------------------------------------------------------------------------


def writes(node: Node) -> tuple[int, ...]:
    """The flat argument positions `node` writes, increasing (EFF-1): what live capture
    recorded, else what the op declares (`declared_writes`)."""
    recorded = node.meta.get(WRITES_META)
    if recorded is not None:
        return tuple(sorted(set(recorded)))
    return declared_writes(node)


def recorded_writes(graph: torch.fx.Graph) -> dict[Node, tuple[int, ...]]:
    """Every writing node of `graph` with its positions (EFF-1)."""
    found = {node: writes(node) for node in graph.nodes}
    return {node: positions for node, positions in found.items() if positions}


def target_may_write(target: Any) -> bool:
    """Whether a node with this target may write an argument whatever its keyword arguments
    (`WRITING_KWARGS` aside): `declared_writes` is `()` for every node of any other target."""
    if _written_schema_args(target) or target in _INPLACE_OPERATORS or in_tables(target):
        return True
    name = target if isinstance(target, str) else qualified_name(target)
    return _is_inplace_name(name.rsplit(".", 1)[-1])


def declared_writes(node: Node) -> tuple[int, ...]:
    """Positions in `flat_node_args(node)` the op declares it writes, increasing (EFF-1), with
    what the reviewed tables say of ops and functions that write undeclared (EFF-9)."""
    listed = table_writes(node)
    declared = _schema_writes(node)
    return tuple(sorted({*declared, *listed})) if listed else declared


def _schema_writes(node: Node) -> tuple[int, ...]:
    written = _written_schema_args(node.target) | {"out"}
    writes_first = _writes_first(node)
    if not writes_first and written.isdisjoint(node.kwargs) and len(written) == 1:
        return ()  # writes nothing: most nodes leave here, before counting arguments
    names = _schema_names(node.target)
    positions: list[int] = []
    offset = 0
    for i, arg in enumerate(node.args):
        n = _node_count(arg)
        if n and ((i == 0 and writes_first) or (i < len(names) and names[i] in written)):
            positions.extend(range(offset, offset + n))
        offset += n
    for name, arg in node.kwargs.items():
        n = _node_count(arg)
        if n and name in written:
            positions.extend(range(offset, offset + n))
        offset += n
    return tuple(positions)


def _node_count(value: Any) -> int:
    found: list[Node] = []
    torch.fx.map_arg(value, found.append)
    return len(found)


def _written_schema_args(target: Any) -> frozenset[str]:
    if not isinstance(target, torch._ops.OpOverload):
        return frozenset()
    return frozenset(
        a.name
        for a in target._schema.arguments
        if a.alias_info is not None and a.alias_info.is_write
    )


def _schema_names(target: Any) -> tuple[str, ...]:
    if isinstance(target, torch._ops.OpOverload):
        return tuple(a.name for a in target._schema.arguments)
    return ()


def _is_inplace_name(name: str) -> bool:
    return name.endswith("_") and not name.startswith("__")


def _writes_first(node: Node) -> bool:
    if node.op == "call_method" and isinstance(node.target, str):
        return _is_inplace_name(node.target)
    if node.op != "call_function":
        return False
    if node.target in _INPLACE_OPERATORS or node.kwargs.get("inplace") is True:
        return True
    name = qualified_name(node.target)
    return name.startswith("torch.") and _is_inplace_name(name.rsplit(".", 1)[-1])


# -- EFF-2 aliases ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A tensor whose storage cannot be read (a sparse tensor): it may share any storage."""

    reason: str


Storage = StorageWeakRef | Unreadable


def value_leaves(value: Any) -> list[torch.Tensor] | None:
    """The tensors of a value in pytree order (a tuple or list flattened), or None when the
    value is unknown (no example value)."""
    if value is None:
        return None
    if isinstance(value, tuple | list):
        return [t for v in value for t in value_leaves(v) or ()]
    return [value] if isinstance(value, torch.Tensor) else []


def storage_of(value: torch.Tensor) -> Storage:
    """The storage `value` lives in. A functorch wrapper (vmap's batched tensor, `grad`'s
    tracking tensor) has none of its own: it is the wrapped tensor's (EFF-2)."""
    while is_functorch_wrapped_tensor(value):
        value = get_unwrapped(value)
    make: Callable[[object], StorageWeakRef] = StorageWeakRef
    typed_storage: Callable[[], object] = value._typed_storage
    try:
        return make(typed_storage())
    except (NotImplementedError, RuntimeError) as e:  # sparse and other storage-less layouts
        return Unreadable(f"{value.layout} tensor: {e}")


Storages = dict[Node, tuple[Storage, ...] | None]  # a node's leaves' storages (None: unknown)


def aliases(node: Node, known: Storages | None = None) -> tuple[tuple[LeafRef, ...], ...]:
    """Per leaf of `node`'s value, the argument leaves whose storage it shares (EFF-2): by
    storage where both example values are known; where an argument's is not, what the op
    declares (`declared_aliases`). `known` keeps the storages read so far (a graph's walk
    reads each value's once)."""
    known = {} if known is None else known
    own = value_storages(node, known)
    if own is None:
        return (declared_aliases(node),)
    arguments: list[tuple[LeafRef, Storage | None]] = []
    for position, arg in enumerate(flat_node_args(node)):
        storages = value_storages(arg, known)
        leaves = (None,) if storages is None else storages
        arguments.extend(((position, k), s) for k, s in enumerate(leaves))
    unknown = {ref[0] for ref, s in arguments if s is None}
    declared = tuple(r for r in declared_aliases(node) if r[0] in unknown) if unknown else ()
    found: list[tuple[LeafRef, ...]] = []
    for storage in own:
        if isinstance(storage, Unreadable):
            found.append(tuple(ref for ref, s in arguments if s is not None))  # any of them
        else:
            shared = tuple(ref for ref, s in arguments if s is not None and _same(s, storage))
            found.append(shared + declared)
    return tuple(found)


def value_storages(node: Node, known: Storages) -> tuple[Storage, ...] | None:
    """The storages of `node`'s value leaves (None: no example value), read once into
    `known`."""
    if node not in known:
        leaves = value_leaves(example_value(node))
        known[node] = None if leaves is None else tuple(map(storage_of, leaves))
    return known[node]


def _same(a: Storage, b: StorageWeakRef) -> bool:
    """Both storages are readable and the same; an unreadable one may be any."""
    return isinstance(a, Unreadable) or a == b


# methods and functions whose result may be a view of their first argument
VIEW_NAMES = frozenset(
    {
        "view", "view_as", "reshape", "reshape_as", "t", "T", "mT", "transpose", "swapaxes",
        "swapdims", "permute", "movedim", "moveaxis", "expand", "expand_as", "unsqueeze",
        "squeeze", "select", "narrow", "as_strided", "flatten", "unflatten", "diagonal",
        "unfold", "split", "chunk", "unbind", "tensor_split", "detach", "contiguous", "to",
        "type_as", "real", "imag", "view_as_real", "view_as_complex", "alias", "getitem",
    }
)  # fmt: skip


def declared_aliases(node: Node) -> tuple[LeafRef, ...]:
    """For a node without an example value: the argument its result may share storage with,
    from a schema's `Tensor(a)`/`Tensor(a!)` return, an in-place name or a view name (EFF-2)."""
    if isinstance(node.target, torch._ops.OpOverload):
        return _schema_aliases(node)
    name = node.target if isinstance(node.target, str) else qualified_name(node.target)
    short = name.rsplit(".", 1)[-1]
    views = short in VIEW_NAMES or _is_inplace_name(short) or node.target is operator.getitem
    if node.op in ("call_method", "call_function") and views and flat_node_args(node):
        return ((0, 0),) if _first_arg_is_node(node) else ()
    return ()


def _first_arg_is_node(node: Node) -> bool:
    return bool(node.args) and isinstance(node.args[0], Node)


def _schema_aliases(node: Node) -> tuple[LeafRef, ...]:
    assert isinstance(node.target, torch._ops.OpOverload), "EFF-2: a schema"
    schema = node.target._schema
    sets = {s for r in schema.returns if r.alias_info is not None for s in r.alias_info.before_set}
    if not sets:
        return ()
    found: list[LeafRef] = []
    offset = 0
    for i, arg in enumerate(node.args):
        n = _node_count(arg)
        info = schema.arguments[i].alias_info if i < len(schema.arguments) else None
        if n and info is not None and not sets.isdisjoint(info.before_set):
            found.extend((p, 0) for p in range(offset, offset + n))
        offset += n
    return tuple(found)


def written_args(node: Node, positions: Sequence[int]) -> list[Node]:
    """The flat arguments at `positions`, each once, in position order."""
    args = flat_node_args(node)
    return list(dict.fromkeys(args[p] for p in positions if 0 <= p < len(args)))
