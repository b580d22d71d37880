"""Extra ordering dependencies (spec chapter 04, "Stable topological sort and ordering deps").

Contract: `OrderingDeps.from_graph(graph, mutated_positions)` holds the extra dependencies torch's
`_populate_additional_deps` computes: mutation order (SRT-6) and autocast pinning (SRT-7),
plus grad-mode and functorch-switch pinning, deliberate divergences (SRT-8, SRT-11). The
replacer updates them in place with `redirect` when it erases a region node (SRT-9); a reverse
index makes that cost proportional to the erased node's own deps and dependents, where torch
rescans every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch
from torch._functorch import predispatch
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
from torch.fx import Graph, Node

from reference.errors import FxOracleError
from reference.keys import flat_node_args

AUTOCAST_TARGETS: tuple[Callable[..., object], ...] = (_enter_autocast, _exit_autocast)
GRAD_MODE_TARGET: Callable[..., object] = torch._C._set_grad_enabled
# The switches of functorch's transforms (vmap, grad, jvp) and of the autograd state they set:
# each changes the interpreter stack or autograd state the nodes after it run under (SRT-11).
FUNCTORCH_TARGETS: tuple[Callable[..., object], ...] = (
    predispatch._vmap_increment_nesting,
    predispatch._vmap_decrement_nesting,
    predispatch._jvp_increment_nesting,
    predispatch._jvp_decrement_nesting,
    predispatch._enter_dual_level,
    predispatch._exit_dual_level,
    torch._C._functorch._grad_increment_nesting,
    torch._C._functorch._grad_decrement_nesting,
    torch._C._functorch.set_inplace_requires_grad_allowed,
    torch._C._set_fwd_grad_enabled,
)  # not the saved-tensor-hook switches `grad` also emits: computation is the same on either
# side of them, and torch's own T7 test pins its order across them


def pinned_targets(pin_grad_mode: bool = True) -> tuple[Callable[..., object], ...]:
    """The global-state switches that keep their place: autocast (torch's, SRT-7), functorch's
    transforms (SRT-11) and, unless `pin_grad_mode=False`, grad mode (SRT-8)."""
    return AUTOCAST_TARGETS + FUNCTORCH_TARGETS + ((GRAD_MODE_TARGET,) if pin_grad_mode else ())


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
        mutated_positions: Mapping[Node, Sequence[int]],
        *,
        pin_grad_mode: bool = True,
    ) -> OrderingDeps:
        """Mutation deps, then global-state deps, as torch's `_populate_additional_deps`.

        `mutated_positions[n]` lists the positions in `keys.flat_node_args(n)` that `n` mutates.
        With `pin_grad_mode=False`, or with no `_set_grad_enabled` node, and with no functorch
        switch (SRT-11), the result equals torch's.
        """
        deps = cls()
        deps._add_mutation_deps(graph, mutated_positions)
        deps._add_global_state_deps(graph, pinned_targets(pin_grad_mode))
        return deps

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

    def redirect(self, erased: Node, to: Node, *, inherit: bool = False) -> None:
        """`erased` is gone and `to` replaces it: torch's per-erasure update, in place. SRT-9.

        `erased`'s own entry is dropped; every node that listed `erased` loses it and lists
        `to` at the end instead, unless `to` is already there (torch's `remove` then `add`).
        With `inherit=True`, `to` first takes over `erased`'s own deps and never lists itself,
        so an erased node's ordering constraints survive (SRT-10, torch drops them).
        """
        if erased is to:
            raise FxOracleError(f"SRT-9: cannot redirect {erased.name} to itself")
        for dep in self._deps.pop(erased, {}):
            self._forget_dependent(dep, erased)
            if inherit and dep is not to:
                self.add(to, dep)
        for dependent in self._dependents.pop(erased, {}):
            own = self._deps[dependent]
            del own[erased]
            if inherit and dependent is to:
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
