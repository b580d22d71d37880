"""The tracker: keys nodes into buckets of identical nodes (spec chapter 01, TRK).

`GraphRegionTracker` is a drop-in for torch's class of the same name: Dynamo calls
`track_node(tx, node)` as it creates nodes (live mode, see `reference.dynamo.capture`), and
`track_node_mutations` / `add_node_mutation` when it sees a value change. `reference.track.offline`
keys an already captured graph from node metadata instead (offline mode).
"""

from __future__ import annotations

from collections.abc import Mapping
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

    The public attributes mirror torch's: `hash_to_duplicates` maps a key to its bucket (torch's
    name; the keys are readable `NodeKey`s, not hashes), `node_to_duplicates` maps a tracked node
    to its bucket (a list shared by all members), `node_to_mutated_arg_positions` maps a node to
    the flat node-argument positions it mutates. `node_to_key` holds each tracked node's key,
    `untracked` the nodes whose key could not be built, with the reason (TRK-7).
    """

    def __init__(self) -> None:
        self.hash_to_duplicates: dict[NodeKey, list[Node]] = {}
        self.node_to_key: dict[Node, NodeKey] = {}
        self.node_to_duplicates: dict[Node, list[Node]] = {}
        self.node_to_mutated_arg_positions: dict[Node, OrderedSet[int]] = {}
        self.untracked: dict[Node, str] = {}

    def track_node(self, tx: Any, node: Node) -> None:
        """Key `node` at its call site in `tx` (Dynamo's translator) under the process's global
        state (live mode); re-tracking is a no-op."""
        if node in self.node_to_key or node in self.untracked:
            return
        site = CallSite(str(tx.f_code.co_filename), int(tx.lineno), tx.instruction_pointer)
        self.track_with(node, current_global_state(), site)

    def track_with(self, node: Node, state: GlobalState, site: CallSite | None) -> None:
        """Key `node` with the given state and call site and append it to its key's bucket; an
        unkeyable node is recorded as untracked, with the reason (TRK-7)."""
        try:
            key = node_key(node, state, site)
        except Unkeyable as e:
            self.untracked[node] = str(e)
            return
        bucket = self.hash_to_duplicates.setdefault(key, [])
        bucket.append(node)
        self.node_to_key[node] = key
        self.node_to_duplicates[node] = bucket

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
        """The buckets region growth reads (TRK-12): groups from `hash_to_duplicates`; a node
        counts as its bucket's while regions grow only while `node_to_duplicates` maps it to
        that bucket, as torch's `_is_identical` reads it."""
        buckets = self.hash_to_duplicates.values()
        in_bucket = self.node_to_duplicates.get
        excluded = [n for bucket in buckets for n in bucket if in_bucket(n) is not bucket]
        return Buckets(tuple(map(tuple, buckets)), frozenset(excluded))

    def origin(self, node: Node) -> Origin | None:
        """The call site and global state `node` was keyed with; None when it is untracked."""
        key = self.node_to_key.get(node)
        return None if key is None else Origin(key.call_site, key.global_state)
