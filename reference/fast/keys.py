"""Offline keying's fast path: one graph's tracker with every value described once (spec chapter
01, TRK-13).

`track_graph_fast(graph)` is `reference.track.offline.track_graph(graph)`, computed faster
(`tests/reference/test_key_cache.py` proves the two equal); callers that key large graphs ask
for it by calling it. A captured graph's metadata no longer changes, so a node's argument key is
the same for every user of the node: `KeyCache` describes each node's example value once, and
each distinct dense tensor layout (dtype, sizes, strides, device, grad and view flags) once.
Every distinct description, call site and global state is interned to a small integer, so a
node's key is first a `RawKey`, a tuple of integers and strings that Python hashes without
calling back into Python code; the readable `NodeKey` is built once per distinct raw key. Live
tracking does not use it: there, an in-place op may still change a value's metadata (`t_()`)
after it was read. The cyclic garbage collector is paused meanwhile: keying allocates nothing
cyclic, and each of the collector's passes would walk every node and fake tensor of the graph
again.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Generic, TypeVar

import torch
import torch.fx
from torch._C._functorch import is_functorch_wrapped_tensor
from torch._subclasses.fake_tensor import FakeTensor

from reference.effects.node_effects import WRITES_META, WRITING_KWARGS, target_may_write, writes
from reference.fx_helpers import example_value
from reference.names import qualified_name
from reference.track.keys import (
    ArgKey,
    CallSite,
    GlobalState,
    Missing,
    NodeKey,
    Seq,
    TensorMeta,
    Unkeyable,
    constant_key,
    current_global_state,
    dict_key,
    tensor_meta,
    value_key,
)
from reference.track.offline import call_site_from_stack_trace
from reference.track.tracker import GraphRegionTracker

Node = torch.fx.Node
Target = Any  # an fx node's target: a string, a callable or an op overload (all hashable)
# Constant types whose equal values have equal reprs (not float: 0.0 == -0.0).
_EXACT_CONSTANTS = frozenset({int, bool, str, type(None)})
RawMeta = tuple[object, ...]  # what a dense, non-symbolic tensor's `TensorMeta` is computed from
# (global state id, call site id, op, target name, kwarg names, arg ids, kwarg ids)
RawKey = tuple[int, int, str, str, tuple[str, ...], tuple[int, ...], tuple[int, ...]]
Keyed = tuple[Node, RawKey | Unkeyable, bool]  # a node, its raw key or why none, may it write
H = TypeVar("H", bound=Hashable)
T = TypeVar("T")


class Interner(Generic[H]):
    """Equal values get one small integer; `values[i]` is the value of integer `i`."""

    def __init__(self) -> None:
        self._ids: dict[H, int] = {}
        self.values: list[H] = []

    def id_of(self, value: H) -> int:
        found = self._ids.get(value)
        if found is None:
            found = self._ids[value] = len(self.values)
            self.values.append(value)
        return found


class KeyCache:
    """Keys of one graph's nodes, sharing each value's description between its users (TRK-13)."""

    def __init__(self) -> None:
        self._args: Interner[ArgKey] = Interner()
        self._states: Interner[GlobalState] = Interner()
        self._sites: Interner[CallSite | None] = Interner()
        self._node_ids: dict[Node, int] = {}
        self._const_ids: dict[tuple[type, object], int] = {}
        self._layout_ids: dict[RawMeta, int] = {}
        self._trace_ids: dict[str | None, int] = {}
        self._targets: dict[Target, tuple[str, bool]] = {}  # qualified name, may it write
        self._direct: dict[type, bool] = {_FAKE: True, torch.Tensor: True}
        self._outside_enabled: bool | None = None  # set while `reading()`

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Subclass `__torch_function__` off while keys are built: FakeTensor's is torch's no-op,
        yet each metadata read would look it up. Tensors of a subclass with a real one are read
        with it on again, as outside (`_tensor_id`), so no key changes."""
        self._outside_enabled = torch._C._is_torch_function_enabled()
        try:
            with torch._C.DisableTorchFunctionSubclass():
                yield
        finally:
            self._outside_enabled = None

    def site_id(self, stack_trace: str | None) -> int:
        """The interned `offline.call_site_from_stack_trace(stack_trace)`, parsed once per trace."""
        found = self._trace_ids.get(stack_trace)
        if found is None:
            site = call_site_from_stack_trace(stack_trace)
            found = self._trace_ids[stack_trace] = self._sites.id_of(site)
        return found

    def keys(self, nodes: Iterable[Node], state: GlobalState) -> Iterator[Keyed]:
        """Each node but the output with its raw key (or the `Unkeyable` that stopped it, as
        `keys.node_key` raises it) and whether it may write an argument. The call site comes
        from the `stack_trace`; the global state is `state`, except grad mode, which follows
        the graph's own `_set_grad_enabled` calls (TRK-10). Offline keying's hot loop: memo hits
        are read inline, and a fake tensor value is described as its node goes by."""
        state_id = self._states.id_of(state)
        node_ids, trace_ids, targets = self._node_ids, self._trace_ids, self._targets
        for node in nodes:
            op, target, meta = node.op, node.target, node.meta
            if op == "output":
                continue
            if target is _SET_GRAD_ENABLED and op == "call_function":
                state = replace(state, grad_enabled=bool(node.args[0]))
                state_id = self._states.id_of(state)
            value = meta.get("example_value", meta.get("val"))  # `fx_helpers.example_value`
            if type(value) is _FAKE:  # its users find it in `_node_ids`
                node_ids[node] = self._tensor_id(value)
            site = trace_ids.get(meta.get("stack_trace"))
            if site is None:
                site = self.site_id(meta.get("stack_trace"))
            try:
                name, writes = targets[target]
            except (KeyError, TypeError):  # not seen yet, or unhashable
                name, writes = _memo(targets, target, _target_facts)
            kwargs = node.kwargs
            if kwargs:
                writes = writes or not WRITING_KWARGS.isdisjoint(kwargs)
            if WRITES_META in meta:  # live capture saw it write (EFF-1)
                writes = True
            try:
                yield node, (state_id, site, op, name, *self._arg_ids(node.args, kwargs)), writes
            except Unkeyable as e:
                yield node, e, writes

    def _arg_ids(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
        """Kwarg names (sorted), arg ids and kwarg ids of a raw key."""
        ids = tuple(map(self._arg_id, args))
        if not kwargs:
            return (), ids, ()
        names = tuple(sorted(kwargs))
        return names, ids, tuple(self._arg_id(kwargs[n]) for n in names)

    def node_key(self, raw: RawKey) -> NodeKey:
        """The readable key of a raw key: `keys.node_key`'s value for the node."""
        state, site, op, name, names, args, kwargs = raw
        v = self._args.values
        return NodeKey(self._states.values[state], self._sites.values[site], op, name, names,
                       tuple(v[i] for i in args), tuple(v[i] for i in kwargs))  # fmt: skip

    def tensor_meta(self, t: torch.Tensor) -> TensorMeta:
        """`keys.tensor_meta(t)`, computed once per distinct dense layout."""
        meta = self._args.values[self._tensor_id(t)]
        assert isinstance(meta, TensorMeta), "TRK-13: a tensor's id names its TensorMeta"
        return meta

    def _arg_id(self, arg: Any) -> int:
        kind = type(arg)
        if kind is Node:
            found = self._node_ids.get(arg)
            return self._describe(arg) if found is None else found
        if kind in _EXACT_CONSTANTS:
            found = self._const_ids.get((kind, arg))
            if found is None:
                found = self._const_ids[(kind, arg)] = self._args.id_of(constant_key(arg))
            return found
        if isinstance(arg, Node):
            return self._describe(arg)
        return self._args.id_of(self._value_key(arg))

    def _describe(self, node: Node) -> int:
        """The id of `node`'s example value's description, computed once."""
        found = self._node_ids.get(node)
        if found is None:
            value = example_value(node)
            if isinstance(value, torch.Tensor):
                found = self._tensor_id(value)
            elif value is None:
                found = self._args.id_of(Missing())
            else:
                found = self._args.id_of(self._value_key(value))
            self._node_ids[node] = found
        return found

    def _value_key(self, value: Any) -> ArgKey:
        """`keys.value_key(value)`, with the nodes and tensors inside containers described once:
        containers are walked here as `keys.value_key` walks them, anything else goes there."""
        if isinstance(value, Node):
            return self._args.values[self._describe(value)]
        if isinstance(value, torch.Tensor):
            return self.tensor_meta(value)
        if isinstance(value, (tuple, list)):
            kind = "size" if isinstance(value, torch.Size) else type(value).__name__
            return Seq(kind, tuple(map(self._value_key, value)))
        if isinstance(value, slice):
            return Seq("slice", tuple(map(self._value_key, (value.start, value.stop, value.step))))
        if isinstance(value, dict):
            return dict_key(value, self._value_key)
        return value_key(value)

    def _tensor_id(self, t: torch.Tensor) -> int:
        kind = type(t)
        if kind is not _FAKE and (
            not _memo(self._direct, kind, _reads_directly) or is_functorch_wrapped_tensor(t)
        ):  # `tensor_meta` raises `Unkeyable` for a functorch wrapper (TRK-14)
            return self._args.id_of(self._meta_as_outside(t))
        if t.layout is not _STRIDED or t._has_symbolic_sizes_strides:
            return self._args.id_of(tensor_meta(t))
        dtype = t.dtype
        flags = None if dtype in _NEITHER_CONJ_NOR_QUANTIZED else (t.is_quantized, t.is_conj())
        raw: RawMeta = (dtype, t.shape, t.stride(), t.device, t.requires_grad,
                        t.is_neg(), t.is_inference(), flags)  # fmt: skip
        found = self._layout_ids.get(raw)
        if found is None:
            found = self._layout_ids[raw] = self._args.id_of(tensor_meta(t))
        return found

    def _meta_as_outside(self, t: torch.Tensor) -> TensorMeta:
        """`keys.tensor_meta(t)` with `__torch_function__` as it was outside `reading()`."""
        if self._outside_enabled:
            with torch._C._EnableTorchFunction():
                return tensor_meta(t)
        return tensor_meta(t)


def _target_facts(target: Target) -> tuple[str, bool]:
    """A target's qualified name, and whether its nodes may write an argument whatever their
    keyword arguments (`effects.target_may_write`)."""
    return qualified_name(target), target_may_write(target)


def _reads_directly(kind: type) -> bool:
    """Whether metadata reads of a `kind` tensor mean the same with subclass `__torch_function__`
    off: a plain tensor, or a subclass whose `__torch_function__` is torch's no-op."""
    return kind is torch.Tensor or (
        getattr(kind, "__torch_function__", None) is torch._C._disabled_torch_function_impl
    )


_FAKE = FakeTensor
_SET_GRAD_ENABLED = torch._C._set_grad_enabled
_STRIDED = torch.strided
# Real, unquantized dtypes: torch sets the conjugate bit on complex tensors only (c10 asserts
# it) and quantized tensors have quantized dtypes, so tensors of these dtypes have neither flag.
_NEITHER_CONJ_NOR_QUANTIZED = frozenset(
    {d for d in vars(torch).values() if isinstance(d, torch.dtype) and d.is_floating_point}
    | {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}
)


def _memo(memo: dict[Target, T], target: Target, compute: Callable[[Target], T]) -> T:
    """`compute(target)`, remembered in `memo` (an unhashable target is computed every time)."""
    try:
        found = memo.get(target)
    except TypeError:
        return compute(target)
    if found is None:
        found = memo[target] = compute(target)
    return found


def track_graph_fast(graph: torch.fx.Graph) -> GraphRegionTracker:
    """`offline.track_graph(graph)`: the same buckets, keys, untracked nodes and mutated
    positions (TRK-13)."""
    cache = KeyCache()
    with collector_paused(), cache.reading():
        return _track_all(graph, cache)


def _track_all(graph: torch.fx.Graph, cache: KeyCache) -> GraphRegionTracker:
    tracker = GraphRegionTracker()
    keyed: dict[RawKey, tuple[NodeKey, list[Node]]] = {}  # each distinct key's bucket
    to_key, to_bucket = tracker.node_to_key, tracker.node_to_duplicates
    buckets = tracker.hash_to_duplicates
    for node, raw, may_write in cache.keys(graph.nodes, current_global_state()):
        if isinstance(raw, Unkeyable):
            tracker.untracked[node] = str(raw)
        else:
            found = keyed.get(raw)
            if found is None:
                key = cache.node_key(raw)
                found = keyed[raw] = key, buckets.setdefault(key, [])
            key, bucket = found
            bucket.append(node)  # `tracker.track_with`'s bucketing, inline: the hot loop
            to_key[node] = key
            to_bucket[node] = bucket
        if may_write:
            for position in writes(node):
                tracker.add_node_mutation(node, position)
    return tracker


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, then as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
