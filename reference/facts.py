"""Alias and mutation facts for the replacer, computed once and updated in place (chapter 03).

The replacer asks, per region: which positions does a node mutate, which nodes mutate a value,
which storage does a value live in. Building these per region would cost a pass over the graph
each time. `ValueFacts` builds them once; when a region is replaced, each new `getitem` output
takes over the facts of the value it replaces (RPL-10), so later regions see them unchanged.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch
import torch.fx
from torch._C._functorch import get_unwrapped, is_functorch_wrapped_tensor
from torch.multiprocessing.reductions import StorageWeakRef

from reference.keys import example_value, flat_node_args

Node = torch.fx.Node


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A tensor value whose storage cannot be read (e.g. a sparse tensor): why, for RPL-8."""

    reason: str


Storage = StorageWeakRef | Unreadable | None  # None: not a tensor


class ValueFacts:
    """Graph positions, mutated positions, writers of each value, and storages (cached)."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        mutated: Mapping[Node, Iterable[int]],
        pinned: Iterable[Callable[..., object]] = (),
    ) -> None:
        self.rank: dict[Node, int] = {n: i for i, n in enumerate(graph.nodes)}
        targets = tuple(pinned)
        self.pinned = [n for n in graph.nodes if n.target in targets]
        self.pinned_ranks = [self.rank[n] for n in self.pinned]
        self.mutated: dict[Node, frozenset[int]] = {
            n: frozenset(p) for n, p in mutated.items() if n in self.rank
        }
        self.writers: dict[Node, list[Node]] = {}
        for node in sorted(self.mutated, key=self.rank.__getitem__):
            args = flat_node_args(node)
            for p in sorted(self.mutated[node]):
                if 0 <= p < len(args) and node not in self.writers.get(args[p], []):
                    self.writers.setdefault(args[p], []).append(node)
        self._storage: dict[Node, Storage] = {}
        self.replaced_by: dict[Node, Node] = {}

    def storage(self, node: Node) -> Storage:
        """The storage of the node's example value, or None for non-tensors (RPL-8)."""
        if node not in self._storage:
            value = example_value(node)
            self._storage[node] = _storage_ref(value) if isinstance(value, torch.Tensor) else None
        return self._storage[node]

    def pin_between(self, nodes: Iterable[Node]) -> Node | None:
        """RPL-16: a pinned global-state node strictly inside the span of `nodes`, if any."""
        ranks = [self.rank[n] for n in nodes]
        k = bisect.bisect_right(self.pinned_ranks, min(ranks))
        inside = k < len(self.pinned_ranks) and self.pinned_ranks[k] < max(ranks)
        return self.pinned[k] if inside else None

    def taken_over(self, nodes: Iterable[Node]) -> Node | None:
        """RPL-17: the first of `nodes` an earlier call has replaced (and erased), if any."""
        return next((n for n in nodes if n in self.replaced_by), None)

    def take_over(self, old: Node, new: Node, erased: Iterable[Node]) -> None:
        """RPL-10: `new` replaces `old`; writers inside the replaced region are gone."""
        self.replaced_by[old] = new
        gone = set(erased)
        writers = [w for w in self.writers.pop(old, []) if w not in gone]
        if writers:
            self.writers[new] = writers
        if old in self._storage:
            self._storage[new] = self._storage.pop(old)


def _storage_ref(value: torch.Tensor) -> StorageWeakRef | Unreadable:
    """The storage `value` lives in. A functorch wrapper (vmap's batched tensor, `grad`'s
    tracking tensor) has none of its own: its storage is the wrapped tensor's (RPL-8)."""
    while is_functorch_wrapped_tensor(value):
        value = get_unwrapped(value)
    make: Callable[[object], StorageWeakRef] = StorageWeakRef
    typed_storage: Callable[[], object] = value._typed_storage
    try:
        return make(typed_storage())
    except (NotImplementedError, RuntimeError) as e:  # sparse and other storage-less layouts
        return Unreadable(f"{value.layout} tensor: {e}")
