"""Extra ordering dependencies (spec chapter 04, "Stable topological sort and ordering deps").

`OrderingDeps.from_graph(graph, writes, policy=..., db=...)` holds the extra dependencies
torch's `_populate_additional_deps` computes, run as rules in order, each yielding
`(node, dep)` edges:

- `mutation_order`: a write stays between the direct users of what it writes (torch's, SRT-6);
- the rules torch lacks that the policy adds (`reference.sort.rules.effect_rules`): writes
  ordered against every alias (SRT-12) and random draws in order (SRT-13);
- `global_state_order`: the switches `reference.sort.rules.pinned_targets` names keep their
  place (autocast, torch's, SRT-7; functorch's, SRT-11; grad mode, SRT-8).

`policy` is only passed on: `reference.sort.rules` reads it (`reference.pipeline.outline` reads
the replacer's switches). The replacer updates the deps with `redirect` when it erases a region
node (SRT-9, SRT-10).
Bad input (a write outside the graph, a node redirected to itself) is named by
`reference.sort.inputs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from torch.fx import Graph, Node

from reference.effects.alias_db import AliasDB
from reference.fx_helpers import flat_node_args
from reference.policy import RIGHT, Policy
from reference.sort import inputs
from reference.sort.rules import Targets, Writes, effect_rules
from reference.sort.rules import pinned_targets as pinned_targets  # the policy's pins, SRT-7


def ordering_deps(
    graph: Graph, writes: Mapping[Node, Iterable[int]], policy: Policy = RIGHT,
    db: AliasDB | None = None,
) -> OrderingDeps:  # fmt: skip
    """The extra ordering dependencies of `graph` (SRT-6..SRT-13) under `policy`, `writes` as a
    tracker records them, each node's positions used in the recorded order as torch's
    `_add_mutation_dependencies` does (positions of nodes no longer in the graph ignored)."""
    present = set(graph.nodes)
    positions = {n: tuple(p) for n, p in writes.items() if n in present}
    return OrderingDeps.from_graph(graph, positions, policy=policy, db=db)


@dataclass(slots=True, eq=False, repr=False)
class OrderingDeps:
    """`node -> the nodes it must follow`, each list unique and in torch's insertion order.

    `_dependents` is the reverse index (`dep -> nodes listing it`), kept by `add` and
    `redirect`, the only two mutators: an erasure costs what the erased node touches.
    """

    _deps: dict[Node, dict[Node, None]] = field(default_factory=dict)  # dicts as ordered sets
    _dependents: dict[Node, dict[Node, None]] = field(default_factory=dict)

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
        found = cls.of_effects(graph, writes, policy=policy, db=db)
        for node, dep in global_state_order(graph, pinned_targets(policy)):
            found.add(node, dep)
        return found

    @classmethod
    def of_effects(
        cls, graph: Graph, writes: Writes | None = None, *, policy: Policy = RIGHT,
        db: AliasDB | None = None,
    ) -> OrderingDeps:  # fmt: skip
        """The deps that writes and draws impose (SRT-6, SRT-12, SRT-13), no global-state pins:
        what split's partitions must respect too (SPL-15)."""
        db = AliasDB(graph, writes) if db is None else db
        found = cls()
        for rule in (mutation_order, *effect_rules(policy)):
            for node, dep in rule(graph, db, db.written if writes is None else writes):
                found.add(node, dep)
        return found

    def add(self, node: Node, dep: Node) -> None:
        """Record that `node` must follow `dep` (appended unless already listed)."""
        self._deps.setdefault(node, {})[dep] = None
        self._dependents.setdefault(dep, {})[node] = None

    def deps_of(self, node: Node) -> tuple[Node, ...]:
        """The nodes `node` must follow, in insertion order (torch's `OrderedSet` order)."""
        return tuple(self._deps.get(node, ()))

    def as_mapping(self) -> dict[Node, tuple[Node, ...]]:
        """Every non-empty entry, for `stable_topological_sort`."""
        return {node: tuple(own) for node, own in self._deps.items()}

    def redirect(self, erased: Node, to: Node, *, keep_erased_deps: bool = False) -> None:
        """`erased` is gone and `to` replaces it: torch's per-erasure update, in place. SRT-9.

        `erased`'s own entry is dropped; every node that listed `erased` loses it and lists
        `to` at the end instead, unless `to` is already there (torch's `remove` then `add`).
        With `keep_erased_deps`, `to` first takes over `erased`'s own deps and never lists itself,
        so an erased node's ordering constraints survive (SRT-10, torch drops them).
        """
        inputs.check_redirect(erased, to)
        for dep in self._deps.pop(erased, {}):
            del self._dependents[dep][erased]
            if keep_erased_deps and dep is not to:
                self.add(to, dep)
        for dependent in self._dependents.pop(erased, {}):
            own = self._deps[dependent]
            del own[erased]
            if not (keep_erased_deps and dependent is to):
                self.add(dependent, to)
            elif not own:
                del self._deps[to]


def mutation_order(graph: Graph, db: AliasDB, writes: Writes) -> Iterator[tuple[Node, Node]]:
    """torch's `_add_mutation_dependencies`: a writer is ordered against the DIRECT users of
    the arg it writes, earlier users before it, later users after it. SRT-6."""
    inputs.check_writes(graph, writes)
    rank = {node: i for i, node in enumerate(graph.nodes)}
    for node, positions in writes.items():
        for position in positions:
            for user in flat_node_args(node)[position].users:
                if user is not node:
                    yield (node, user) if rank[user] < rank[node] else (user, node)


def global_state_order(graph: Graph, targets: Targets) -> Iterator[tuple[Node, Node]]:
    """torch's `_add_global_state_dependencies`: a node whose target is one of `targets` follows
    every earlier node and precedes every later one (edges to its own args are implied, so
    omitted). SRT-7."""
    nodes = list(graph.nodes)
    pinned: list[Node] = []
    for index, node in enumerate(nodes):
        args = set(flat_node_args(node))
        pins = any(node.target is target for target in targets)
        earlier = nodes[:index] if pins else []
        yield from ((node, dep) for dep in [*pinned, *earlier] if dep not in args)
        if pins:
            pinned.append(node)
