"""The tracker: keys nodes into buckets of identical nodes (spec chapter 01, TRK).

`GraphRegionTracker` is a drop-in for torch's class of the same name: Dynamo calls
`track_node(tx, node)` as it creates nodes (live mode, see `reference.dynamo.capture`), and
`track_node_mutations` / `add_node_mutation` when it sees a value change. `reference.track.offline`
keys an already captured graph from node metadata instead (offline mode).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.fx
from torch.utils._ordered_set import OrderedSet

from reference.expand.regions import Buckets, find_identical_regions
from reference.track.keys import (
    CallSite,
    GlobalState,
    NodeKey,
    Origin,
    Unkeyable,
    current_global_state,
    node_key,
)

Node = torch.fx.Node


class GraphRegionTracker:
    """Buckets of key-equal nodes in tracking order, plus mutated argument positions (TRK-1).

    The public attributes mirror torch's: `node_to_duplicates` maps a tracked node to its
    bucket (a list shared by all members), `node_to_mutated_arg_positions` maps a node to the
    flat node-argument positions it mutates. `untracked` records nodes whose key could not be
    built, with the reason (TRK-7).
    """

    def __init__(self, read_state: Callable[[], GlobalState] = current_global_state) -> None:
        self._read_state = read_state
        self.key_to_duplicates: dict[NodeKey, list[Node]] = {}
        self.node_to_key: dict[Node, NodeKey] = {}
        self.node_to_duplicates: dict[Node, list[Node]] = {}
        self.node_to_mutated_arg_positions: dict[Node, OrderedSet[int]] = {}
        self.untracked: dict[Node, str] = {}

    # -- live mode: the calls Dynamo makes ----------------------------------------------------
    def track_node(self, tx: Any, node: Node) -> None:
        """Key `node` at its call site in `tx` (Dynamo's translator); re-tracking is a no-op."""
        if node in self.node_to_key or node in self.untracked:
            return
        site = None
        if tx is not None:
            site = CallSite(str(tx.f_code.co_filename), int(tx.lineno), tx.instruction_pointer)
        self.track_with(node, self._read_state(), site)

    def track_node_mutations(
        self, node: Node, flat_args_kwargs: list[Any], id_to_initial_version: Mapping[int, int]
    ) -> None:
        """Record the positions whose version counter moved while `node` ran (TRK-8).

        `id_to_initial_version` is keyed by `id()` of the fake values, as Dynamo builds it; the
        ids are only looked up here, never stored or printed.
        """
        for i, arg in enumerate(flat_args_kwargs):
            before = id_to_initial_version.get(id(arg))
            if before is not None and before != arg._version:
                self.add_node_mutation(node, i)

    def add_node_mutation(self, node: Node, arg_pos: int) -> None:
        """Record that `node` mutates its flat node argument at `arg_pos` (e.g. setitem: 0)."""
        self.node_to_mutated_arg_positions.setdefault(node, OrderedSet()).add(arg_pos)

    def get_identical_regions(self, graph: torch.fx.Graph) -> list[list[list[Node]]]:
        """Region groups of `graph` in torch's shape and order (chapter 02)."""
        return find_identical_regions(graph, self)

    def buckets(self) -> Buckets:
        """The buckets region growth reads (TRK-12): groups from `key_to_duplicates`; a node
        counts as its bucket's while regions grow only while `node_to_duplicates` maps it to
        that bucket, as torch's `_is_identical` reads it."""
        buckets = self.key_to_duplicates.values()
        in_bucket = self.node_to_duplicates.get
        excluded = [n for bucket in buckets for n in bucket if in_bucket(n) is not bucket]
        return Buckets(tuple(map(tuple, buckets)), frozenset(excluded))

    def remapped(self, nodes: Mapping[Node, Node]) -> GraphRegionTracker:
        """A tracker of a copy of the graph: every node replaced by `nodes[node]` (nodes not in
        `nodes`, no longer in the graph, are dropped). Edits to `node_to_duplicates` carry over."""
        copy = GraphRegionTracker(self._read_state)
        for key, bucket in self.key_to_duplicates.items():
            moved = [nodes[n] for n in bucket if n in nodes]
            copy.key_to_duplicates[key] = moved
            for old, new in zip((n for n in bucket if n in nodes), moved, strict=True):
                copy.node_to_key[new] = key
                if self.node_to_duplicates.get(old) is bucket:
                    copy.node_to_duplicates[new] = moved
        for old, positions in self.node_to_mutated_arg_positions.items():
            if old in nodes:
                copy.node_to_mutated_arg_positions[nodes[old]] = OrderedSet(positions)
        copy.untracked = {nodes[n]: why for n, why in self.untracked.items() if n in nodes}
        return copy

    # -- shared --------------------------------------------------------------------------------
    def track_with(self, node: Node, state: GlobalState, site: CallSite | None) -> None:
        """Key `node` with the given state and call site and add it to its bucket (TRK-7: an
        unkeyable node is recorded as untracked, with the reason)."""
        try:
            key = node_key(node, state, site)
        except Unkeyable as e:
            self.untracked[node] = str(e)
            return
        self.add(node, key)

    def add(self, node: Node, key: NodeKey) -> None:
        """Record `node` as keyed `key`, at the end of that key's bucket."""
        bucket = self.key_to_duplicates.setdefault(key, [])
        bucket.append(node)
        self.node_to_key[node] = key
        self.node_to_duplicates[node] = bucket

    def origin(self, node: Node) -> Origin | None:
        """The call site and global state `node` was keyed with; None when it is untracked."""
        key = self.node_to_key.get(node)
        return None if key is None else Origin(key.call_site, key.global_state)

    @property
    def hash_to_duplicates(self) -> dict[NodeKey, list[Node]]:
        """torch's name for the buckets (keys here are readable `NodeKey`s, not hashes)."""
        return self.key_to_duplicates
