"""Extra ordering dependencies (spec chapter 04, "Stable topological sort and ordering deps").

Contract: `OrderingDeps.from_graph(graph, writes)` holds the extra dependencies torch's
`_populate_additional_deps` computes, mutation order (SRT-6) and autocast pinning (SRT-7), plus
the deliberate divergences, each switchable by `reference.policy.Policy`: grad-mode and
functorch-switch pinning (SRT-8, SRT-11), writes ordered against every alias of what they write
(SRT-12, from the alias DB of chapter 09) and random draws kept in order (SRT-13). The replacer
updates them in place with `redirect` when it erases a region node (SRT-9); a reverse index makes
that cost proportional to the erased node's own deps and dependents, where torch rescans every
entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from torch.fx import Graph, Node

from reference.effects.alias_db import RNG, AliasDB, StorageClass
from reference.effects.node_effects import AUTOCAST_TARGETS, FUNCTORCH_TARGETS, GRAD_MODE_TARGET
from reference.errors import FxOracleError
from reference.fx_helpers import flat_node_args
from reference.policy import RIGHT, Policy


def pinned_targets(policy: Policy = RIGHT) -> tuple[Callable[..., object], ...]:
    """The global-state switches that keep their place: autocast (torch's, SRT-7), functorch's
    transforms (SRT-11) and, with `policy.pin_grad_mode`, grad mode (SRT-8)."""
    grad = (GRAD_MODE_TARGET,) if policy.pin_grad_mode else ()
    return AUTOCAST_TARGETS + FUNCTORCH_TARGETS + grad


def ordering_deps(
    graph: Graph,
    writes: Mapping[Node, Iterable[int]],
    policy: Policy = RIGHT,
    db: AliasDB | None = None,
) -> OrderingDeps:
    """The extra ordering dependencies of `graph` (SRT-6..SRT-13) under `policy`, `writes` as a
    tracker records them (positions of nodes no longer in the graph ignored)."""
    present = set(graph.nodes)
    positions = {n: tuple(sorted(p)) for n, p in writes.items() if n in present}
    return OrderingDeps.from_graph(graph, positions, policy=policy, db=db)


class OrderingDeps:
    """`node -> the nodes it must follow`, each list unique and in torch's insertion order.

    `_dependents` is the reverse index (`dep -> nodes listing it`), kept exact by `add` and
    `redirect`, the only two mutators.
    """

    __slots__ = ("_dependents", "_deps")

    def __init__(self) -> None:
        self._deps: dict[Node, dict[Node, None]] = {}  # dicts as ordered sets
        self._dependents: dict[Node, dict[Node, None]] = {}

    @classmethod
    def from_graph(
        cls,
        graph: Graph,
        writes: Mapping[Node, Sequence[int]] | None = None,
        *,
        policy: Policy = RIGHT,
        db: AliasDB | None = None,
    ) -> OrderingDeps:
        """Mutation deps, then alias and draw deps, then global-state deps.

        `writes[n]` lists the positions in `fx_helpers.flat_node_args(n)` that `n` writes, in
        the order torch's tracker recorded them (default: `effects.recorded_writes`); `db`, when
        given, is the alias DB built with the same writes. With `policy.TORCH`'s settings for
        grad mode, aliases and draws, the result equals torch's, entry for entry.
        """
        found = cls.of_effects(graph, writes, policy=policy, db=db)
        found._add_global_state_deps(graph, pinned_targets(policy))
        return found

    @classmethod
    def of_effects(
        cls,
        graph: Graph,
        writes: Mapping[Node, Sequence[int]] | None = None,
        *,
        policy: Policy = RIGHT,
        db: AliasDB | None = None,
    ) -> OrderingDeps:
        """The deps that writes and draws impose (SRT-6, SRT-12, SRT-13), no global-state pins:
        what split's partitions must respect too (SPL-15)."""
        if db is None:
            db = AliasDB(graph, writes)
        found = cls()
        found._add_mutation_deps(graph, db.written if writes is None else writes)
        if policy.order_aliases or policy.order_draws:
            found._add_access_deps(graph, db, policy)
        return found

    def add(self, node: Node, dep: Node) -> None:
        """Record that `node` must follow `dep` (appended unless already listed)."""
        own = self._deps.setdefault(node, {})
        if dep not in own:
            own[dep] = None
            self._dependents.setdefault(dep, {})[node] = None

    def deps_of(self, node: Node) -> tuple[Node, ...]:
        """The nodes `node` must follow, in insertion order (torch's `OrderedSet` order)."""
        return tuple(self._deps.get(node, ()))

    def as_mapping(self) -> dict[Node, tuple[Node, ...]]:
        """Every non-empty entry, for `stable_topological_sort`."""
        return {node: tuple(own) for node, own in self._deps.items()}

    def edge_count(self) -> int:
        """Total number of recorded dependencies (SRT-7 bounds it)."""
        return sum(len(own) for own in self._deps.values())

    def redirect(self, erased: Node, to: Node, *, keep_erased_deps: bool = False) -> None:
        """`erased` is gone and `to` replaces it: torch's per-erasure update, in place. SRT-9.

        `erased`'s own entry is dropped; every node that listed `erased` loses it and lists
        `to` at the end instead, unless `to` is already there (torch's `remove` then `add`).
        With `keep_erased_deps`, `to` first takes over `erased`'s own deps and never lists itself,
        so an erased node's ordering constraints survive (SRT-10, torch drops them).
        """
        if erased is to:
            raise FxOracleError(f"SRT-9: cannot redirect {erased.name} to itself")
        for dep in self._deps.pop(erased, {}):
            self._forget_dependent(dep, erased)
            if keep_erased_deps and dep is not to:
                self.add(to, dep)
        for dependent in self._dependents.pop(erased, {}):
            own = self._deps[dependent]
            del own[erased]
            if keep_erased_deps and dependent is to:
                self._drop_if_empty(to)
            elif to not in own:
                own[to] = None
                self._dependents.setdefault(to, {})[dependent] = None

    def _drop_if_empty(self, node: Node) -> None:
        if not self._deps[node]:
            del self._deps[node]

    def _forget_dependent(self, dep: Node, dependent: Node) -> None:
        users = self._dependents[dep]
        del users[dependent]
        if not users:
            del self._dependents[dep]

    def _add_mutation_deps(
        self, graph: Graph, mutated_positions: Mapping[Node, Sequence[int]]
    ) -> None:
        """torch's `_add_mutation_dependencies`: order a mutator against the DIRECT users of the
        arg it mutates (earlier users before it, later users after it). SRT-6."""
        rank = {node: i for i, node in enumerate(graph.nodes)}
        for node, positions in mutated_positions.items():
            if node not in rank:
                raise FxOracleError(f"SRT-6: mutating node {node.name} is not in the graph")
            args = flat_node_args(node)
            for position in positions:
                if not 0 <= position < len(args):
                    raise FxOracleError(f"SRT-6: {node.name} has no flat arg {position}")
                for user in args[position].users:
                    if user is not node and rank[user] < rank[node]:
                        self.add(node, user)
                    elif user is not node:
                        self.add(user, node)

    def _add_access_deps(self, graph: Graph, db: AliasDB, policy: Policy) -> None:
        """SRT-12, SRT-13: per storage class, a write follows the previous write and every read
        since it, and a read follows the last write before it; the random generator is a class
        every draw writes. Edges torch's rule (SRT-6) or the data already has are not repeated,
        so a graph whose accesses all go through the written node itself gets torch's map."""
        last: dict[StorageClass, Node] = {}
        since: dict[StorageClass, list[Node]] = {}
        for node in graph.nodes:
            written, args = db.writes(node), set(flat_node_args(node))
            for cls in sorted(db.reads(node) | written):
                if not (policy.order_draws if cls == RNG else policy.order_aliases):
                    continue
                before = [last[cls]] if cls in last else []
                if cls in written:
                    before += since.pop(cls, [])
                    last[cls] = node
                else:
                    since.setdefault(cls, []).append(node)
                for dep in before:
                    if dep is not node and dep not in args:
                        self.add(node, dep)

    def _add_global_state_deps(
        self, graph: Graph, targets: Sequence[Callable[..., object]]
    ) -> None:
        """torch's `_add_global_state_dependencies`: a pinned node follows every earlier node
        and precedes every later one (edges to its own args are implied, so omitted). SRT-7."""
        pinned: list[Node] = []
        earlier: list[Node] = []
        for node in graph.nodes:
            args = dict.fromkeys(flat_node_args(node))
            for pin in pinned:
                if pin not in args:
                    self.add(node, pin)
            if any(node.target is target for target in targets):
                for previous in earlier:
                    if previous not in args:
                        self.add(node, previous)
                pinned.append(node)
            earlier.append(node)
