"""The alias DB: which values of a graph share storage, and which nodes read and write each
storage (spec chapter 09, EFF-5 to EFF-7).

A *storage class* is a set of value leaves that share one storage. `StorageClasses` holds them
for any kind of node key (fx nodes here, the checker's flat nodes there): a leaf that shares an
argument leaf's storage joins its class (EFF-2), graph inputs sharing a storage share a class,
every other leaf starts its own. The global random generator is one more class, `RNG`, which
every drawing node writes (EFF-4). A node *reads* the classes of its arguments' leaves and
*writes* those of the arguments it updates (EFF-6).

`AliasDB(graph, writes)` builds them for an fx graph in one pass from the node-local effects
(`reference.effects.node_effects`). When the replacer outlines a region (`replaced`), the DB is
updated in place (the idea of TorchScript's alias DB): the region's nodes leave, the call reads its
operands' classes, and each getitem that takes over a region output joins that output's class,
so the DB equals one built afresh on the new graph (EFF-7), without the rebuild.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, NewType, TypeVar

import torch
import torch.fx

from reference.effects.node_effects import (
    Storages,
    Unreadable,
    aliases,
    draws,
    recorded_writes,
    storage_of,
    value_leaves,
    value_storages,
)
from reference.effects.node_effects import written_args as written_arg_nodes
from reference.fx_helpers import example_value, flat_node_args

Node = torch.fx.Node
K = TypeVar("K", bound=Hashable)
StorageClass = NewType("StorageClass", int)
RNG = StorageClass(0)  # the global random generator, written by every draw (EFF-4)


class UnionFind:
    """Disjoint sets of the ints `0 .. size - 1`, each represented by its smallest member (so a
    set of graph positions is represented by its first). The one union-find of the reference:
    storage classes here, contracted regions in `reference.replace.cycle`."""

    def __init__(self, size: int = 0) -> None:
        self._parent = list(range(size))

    def add(self) -> int:
        """A new set of one new member, returned."""
        self._parent.append(len(self._parent))
        return len(self._parent) - 1

    def find(self, i: int) -> int:
        while self._parent[i] != i:
            self._parent[i] = self._parent[self._parent[i]]  # path halving
            i = self._parent[i]
        return i

    def union(self, a: int, b: int) -> int:
        """One set of `a`'s and `b`'s, returned by its representative."""
        a, b = self.find(a), self.find(b)
        low, high = min(a, b), max(a, b)
        self._parent[high] = low
        return low


class StorageClasses(Generic[K]):
    """Storage classes of value leaves, keyed by node, and each node's reads and writes."""

    def __init__(self) -> None:
        self._sets = UnionFind(1)  # class 0 is RNG
        self._leaves: dict[K, tuple[StorageClass, ...]] = {}
        self._reads: dict[K, tuple[StorageClass, ...]] = {}  # classes as added: `find` them
        self._written: dict[K, tuple[StorageClass, ...]] = {}
        self._draws: set[K] = set()
        self._roots: dict[Hashable, StorageClass] = {}
        self.rank: dict[K, int] = {}

    def add_root(self, key: K, storages: Sequence[Hashable]) -> None:
        """A graph input: each leaf shares a class with every earlier input leaf of the same
        storage key."""
        self.rank[key] = len(self.rank)
        self._leaves[key] = tuple(self._root(s) for s in storages)

    def add(
        self,
        key: K,
        leaves: Sequence[Sequence[tuple[K, int]]],
        args: Sequence[K],
        written: Sequence[K] = (),
        drawing: bool = False,
    ) -> None:
        """A node whose leaf `i` shares storage with the argument leaves `leaves[i]`, that reads
        `args` and writes `written` (all added before it)."""
        self.rank[key] = len(self.rank)
        self._leaves[key] = tuple(self._leaf_class(refs) for refs in leaves)
        self._reads[key] = tuple(c for arg in args for c in self._leaves.get(arg, ()))
        if written:
            self._written[key] = tuple(c for arg in written for c in self._leaves.get(arg, ()))
        if drawing:
            self._draws.add(key)

    def _new(self) -> StorageClass:
        return StorageClass(self._sets.add())

    def _root(self, storage: Hashable) -> StorageClass:
        if storage not in self._roots:
            self._roots[storage] = self._new()
        return self._roots[storage]

    def _leaf_class(self, refs: Sequence[tuple[K, int]]) -> StorageClass:
        found: StorageClass | None = None
        for arg, leaf in refs:
            own = self._leaves.get(arg, ())
            for cls in own[leaf : leaf + 1] or own:  # an unknown argument: any of its leaves
                found = cls if found is None else self.union(found, cls)
        return self._new() if found is None else found

    def find(self, cls: int) -> StorageClass:
        return StorageClass(self._sets.find(cls))

    def union(self, a: int, b: int) -> StorageClass:
        """One class of `a` and `b` (the older id represents it)."""
        return StorageClass(self._sets.union(a, b))

    def classes(self, key: K) -> frozenset[StorageClass]:
        """The classes of `key`'s value leaves (EFF-5)."""
        return frozenset(self.find(c) for c in self._leaves.get(key, ()))

    def leaf_classes(self, key: K) -> tuple[StorageClass, ...]:
        """The class of each of `key`'s value leaves, in leaf order."""
        return tuple(self.find(c) for c in self._leaves.get(key, ()))

    def reads(self, key: K) -> frozenset[StorageClass]:
        """The classes `key` reads: its arguments' leaves, and the generator if it draws."""
        found = {self.find(c) for c in self._reads.get(key, ())}
        return frozenset(found | ({RNG} if key in self._draws else set()))

    def writes(self, key: K) -> frozenset[StorageClass]:
        """The classes `key` writes: its written arguments' leaves, the generator if it draws
        (EFF-6)."""
        found = {self.find(c) for c in self._written.get(key, ())}
        return frozenset(found | ({RNG} if key in self._draws else set()))

    def writers(self, cls: StorageClass) -> list[K]:
        """Every node that writes `cls`, in order."""
        found = set(self._draws) if cls == RNG else set()
        found.update(k for k in self._written if cls in self.writes(k))
        return sorted(found, key=self.rank.__getitem__)

    def forget(self, key: K) -> None:
        """`key` left the graph: it holds, reads and writes nothing any more."""
        for table in (self._leaves, self._reads, self._written):
            table.pop(key, None)
        self._draws.discard(key)


class AliasDB(StorageClasses[Node]):
    """The storage classes of an fx graph's values (EFF-5), built from the node-local effects
    of chapter 09, and kept up to date in place as regions are replaced (EFF-7)."""

    def __init__(
        self,
        graph: torch.fx.Graph,
        writes: Mapping[Node, Iterable[int]] | None = None,
        order: Iterable[Node] | None = None,
    ) -> None:
        """`writes[n]`: positions `n` writes (EFF-1), by default `effects.recorded_writes`;
        `order`: the graph's nodes in an order with arguments first (default: graph order)."""
        super().__init__()
        self._positions: dict[Node, tuple[int, ...]] = {}
        self._known: Storages = {}  # each value's storages, read once
        found = recorded_writes(graph) if writes is None else writes
        for node in graph.nodes if order is None else order:
            self.add_node(node, tuple(sorted(set(found.get(node, ())))))

    def add_node(self, node: Node, positions: Sequence[int] = ()) -> None:
        """Add `node` (its arguments added before) writing the flat arguments at `positions`."""
        if node.op in ("placeholder", "get_attr"):
            storages = value_storages(node, self._known)
            self.add_root(node, [str(node.target)] if storages is None else list(storages))
            return
        args = flat_node_args(node)
        refs = [[(args[p], leaf) for p, leaf in own] for own in aliases(node, self._known)]
        written = written_arg_nodes(node, positions)
        self.add(node, refs, args, written, draws(node))
        if positions:
            self._positions[node] = tuple(positions)

    @property
    def written(self) -> Mapping[Node, tuple[int, ...]]:
        """Every writing node with the flat argument positions it writes (EFF-1)."""
        return self._positions

    def unreadable(self, node: Node) -> str:
        """Why `node`'s value has no readable storage (a sparse tensor), or "" (EFF-2)."""
        for leaf in value_leaves(example_value(node)) or ():
            storage = storage_of(leaf)
            if isinstance(storage, Unreadable):
                return storage.reason
        return ""

    def replaced(
        self, region: Iterable[Node], call: Node, takeovers: Sequence[tuple[Node, Node]]
    ) -> None:
        """`region`'s nodes are erased, `call` (an `invoke_subgraph`) reads their operands and
        draws if they did, and each getitem `new` of `(old, new)` holds what `old` held, and
        ranks where `old` ranked: a region holding it as a flattened operand (RPL-17) spans what
        it spanned."""
        gone = list(region)
        self.add_node(call)
        if any(n in self._draws for n in gone):
            self._draws.add(call)
        for old, new in takeovers:
            if new not in self._leaves:
                self.add_node(new)
                self.rank[new] = self.rank.get(old, self.rank[new])  # old's place (RPL-17)
            for a, b in zip(self._leaves.get(old, ()), self._leaves[new], strict=False):
                self.union(a, b)
        for node in (*gone, *(old for old, _ in takeovers)):
            self.forget(node)
            self._positions.pop(node, None)

    def partition(self, nodes: Iterable[Node]) -> list[NodeAccess]:
        """For comparing two DBs of one graph: per node, the names of the nodes sharing each of
        its leaves' classes, and of those holding what it reads and writes (EFF-7)."""
        listed = list(nodes)
        members: dict[StorageClass, list[str]] = {RNG: ["<rng>"]}
        for node in listed:
            for cls in self.leaf_classes(node):
                members.setdefault(cls, []).append(node.name)

        def names(classes: Iterable[StorageClass]) -> tuple[str, ...]:
            return tuple(sorted(m for c in classes for m in members.get(c, [])))

        return [
            NodeAccess(
                tuple(tuple(members[c]) for c in self.leaf_classes(node)),
                names(self.reads(node)),
                names(self.writes(node)),
            )
            for node in listed
        ]


@dataclass(frozen=True, slots=True)
class NodeAccess:
    """A node's storage classes, reads and writes, each as the names of the nodes holding the
    classes (comparable between two DBs of one graph)."""

    leaves: tuple[tuple[str, ...], ...]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
