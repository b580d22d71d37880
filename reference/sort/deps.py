"""Extra ordering dependencies (spec chapter 04, "Stable topological sort and ordering deps").

`ordering_deps(graph, writes, policy, db)` holds the extra dependencies torch's
`_populate_additional_deps` computes, plus the corrections `policy` asks for. The policy is
read once, in `effect_rules` and `pinned_targets`: they turn it into the rules that apply, plain
functions that yield `(node, dep)` edges and are run in order:

- `mutation_order`: a write stays between the direct users of what it writes (torch's, SRT-6);
- `reference.sort.aliases.access_order`: writes ordered against every alias (SRT-12) and random
  draws in order (SRT-13);
- `global_state_order`: autocast switches keep their place (torch's, SRT-7), so do functorch's
  (SRT-11) and, unless the policy follows torch, grad mode (SRT-8).

The replacer updates the deps with `redirect` when it erases a region node (SRT-9, SRT-10).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial

from torch.fx import Graph, Node

from reference.effects.alias_db import AliasDB
from reference.effects.node_effects import AUTOCAST_TARGETS, FUNCTORCH_TARGETS, GRAD_MODE_TARGET
from reference.errors import FxOracleError
from reference.fx_helpers import flat_node_args
from reference.policy import RIGHT, Policy
from reference.sort.aliases import access_order, ordered_classes

Writes = Mapping[Node, Sequence[int]]
Rule = Callable[[Graph, AliasDB, Writes], Iterable[tuple[Node, Node]]]


def effect_rules(policy: Policy = RIGHT) -> tuple[Rule, ...]:
    """The rules for what nodes write and draw under `policy` (SRT-6, SRT-12, SRT-13)."""
    if not (policy.order_aliases or policy.order_draws):
        return (mutation_order,)
    ordered = ordered_classes(policy.order_aliases, policy.order_draws)
    return mutation_order, partial(access_order, ordered=ordered)


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
    `redirect`, the only two mutators: an erasure costs what the erased node touches.
    """

    __slots__ = ("_dependents", "_deps")

    def __init__(self) -> None:
        self._deps: dict[Node, dict[Node, None]] = {}  # dicts as ordered sets
        self._dependents: dict[Node, dict[Node, None]] = {}

    @classmethod
    def from_graph(
        cls, graph: Graph, writes: Writes | None = None, *, policy: Policy = RIGHT,
        db: AliasDB | None = None,
    ) -> OrderingDeps:  # fmt: skip
        """Every rule `policy` asks for, in order: mutation, alias and draw deps, then global
        state. `writes[n]` lists the positions in `fx_helpers.flat_node_args(n)` that `n` writes,
        in the order torch's tracker recorded them (default: `effects.recorded_writes`); `db`,
        when given, is the alias DB built with the same writes. Under `policy.TORCH` the result
        equals torch's, entry for entry."""
        pins = partial(global_state_order, targets=pinned_targets(policy))
        return cls._of_rules(graph, writes, db, (*effect_rules(policy), pins))

    @classmethod
    def of_effects(
        cls, graph: Graph, writes: Writes | None = None, *, policy: Policy = RIGHT,
        db: AliasDB | None = None,
    ) -> OrderingDeps:  # fmt: skip
        """The deps that writes and draws impose (SRT-6, SRT-12, SRT-13), no global-state pins:
        what split's partitions must respect too (SPL-15)."""
        return cls._of_rules(graph, writes, db, effect_rules(policy))

    @classmethod
    def _of_rules(
        cls, graph: Graph, writes: Writes | None, db: AliasDB | None, rules: Sequence[Rule]
    ) -> OrderingDeps:
        db = AliasDB(graph, writes) if db is None else db
        found = cls()
        for rule in rules:
            for node, dep in rule(graph, db, db.written if writes is None else writes):
                found.add(node, dep)
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
                if not own:
                    del self._deps[to]
            elif to not in own:
                own[to] = None
                self._dependents.setdefault(to, {})[dependent] = None

    def _forget_dependent(self, dep: Node, dependent: Node) -> None:
        users = self._dependents[dep]
        del users[dependent]
        if not users:
            del self._dependents[dep]


def mutation_order(graph: Graph, db: AliasDB, writes: Writes) -> Iterator[tuple[Node, Node]]:
    """torch's `_add_mutation_dependencies`: a writer is ordered against the DIRECT users of
    the arg it writes, earlier users before it, later users after it. SRT-6."""
    rank = {node: i for i, node in enumerate(graph.nodes)}
    for node, positions in writes.items():
        if node not in rank:
            raise FxOracleError(f"SRT-6: mutating node {node.name} is not in the graph")
        args = flat_node_args(node)
        for position in positions:
            if not 0 <= position < len(args):
                raise FxOracleError(f"SRT-6: {node.name} has no flat arg {position}")
            for user in args[position].users:
                if user is not node:
                    yield (node, user) if rank[user] < rank[node] else (user, node)


def global_state_order(
    graph: Graph, db: AliasDB, writes: Writes, *, targets: Sequence[Callable[..., object]]
) -> Iterator[tuple[Node, Node]]:
    """torch's `_add_global_state_dependencies`: a node whose target is one of `targets` follows
    every earlier node and precedes every later one (edges to its own args are implied, so
    omitted). SRT-7."""
    pinned: list[Node] = []
    earlier: list[Node] = []
    for node in graph.nodes:
        args = set(flat_node_args(node))
        for pin in pinned:
            if pin not in args:
                yield node, pin
        if any(node.target is target for target in targets):
            for previous in earlier:
                if previous not in args:
                    yield node, previous
            pinned.append(node)
        earlier.append(node)
