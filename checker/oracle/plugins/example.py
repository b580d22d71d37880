"""An independent deduplication pass, written against `checker.oracle.protocol` alone: the
example a plug-in author copies (spec chapter 08, DIF-1; course chapter 08).

`Example` implements three components with nothing of fxoracle's pipeline, only torch.fx:

- `find_regions`: lock-step region growth over the capture's buckets of key-equal nodes;
- `deduplicate`: the regions outlined into `invoke_subgraph` calls: one subgraph per group,
  copied from region 0 (one placeholder per distinct outside input, the outputs every region's
  outside users need), ordering dependencies from the capture's mutation facts (a write stays
  between every earlier and later reader of its storage, views included), random draws kept in
  their order and global-state switches kept in place, then a sort;
- `stable_sort`: Kahn's algorithm that always places the earliest ready node (a valid order,
  not necessarily torch's).

It is simpler than fxoracle's reference and more cautious: it leaves alone a region that writes
or draws anything, whose operands or outputs are not plain tensors or share storage, that spans
a global-state switch or an outside write of what it reads, whose operand is written after it
in training (torch's runtime saves operands for backward), or whose calls would close a cycle.
Where it outlines less than the reference, both are correct and the oracle says so. It does not
split: the diff lists `split` as skipped. `checker/oracle/plugins/planted.py` holds its twins
with planted bugs, which the oracle must catch and blame on them:

    fxoracle diff tests/corpus/*.py --against checker.oracle.plugins.example:Example
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

import torch
import torch.fx

from checker.oracle.plugins.regions import Region, grow
from checker.oracle.plugins.subgraphs import (
    Deps,
    closes_cycle,
    install,
    operands,
    outputs_of,
    replace,
    usages,
    wiring,
)
from checker.oracle.protocol import CapturedGraph, DedupOutput, RegionGroups

Node = torch.fx.Node
SWITCHES = ("_set_grad_enabled", "_enter_autocast", "_exit_autocast")
RANDOM = ("rand", "dropout", "bernoulli", "normal", "multinomial", "randperm")  # draws (EFF-4)


class Example:
    """An honest implementation: region finding, deduplication and sorting."""

    # -- component `tracker` --------------------------------------------------------------------
    def find_regions(self, graph: CapturedGraph) -> RegionGroups:
        return tuple(tuple(tuple(n.name for n in r) for r in g) for g in self.groups(graph))

    def groups(self, graph: CapturedGraph) -> list[list[Region]]:
        """Groups of regions, latest group first, region 0 in graph order, positions aligned."""
        buckets = self.buckets(graph)
        same = {n: k for k, bucket in enumerate(buckets) for n in bucket}
        order = {n: i for i, n in enumerate(graph.gm.graph.nodes)}
        starts = sorted((b for b in buckets if len(b) > 1), key=lambda b: -min(order[n] for n in b))
        claimed: set[Node] = set()
        found = []
        for bucket in starts:
            regions = grow([n for n in bucket if n not in claimed], same, claimed)
            if len(regions) > 1 and len(regions[0]) > 1:
                ranked = sorted(range(len(regions[0])), key=lambda i: order[regions[0][i]])
                found.append([[r[i] for i in ranked] for r in regions])
        return found

    def buckets(self, graph: CapturedGraph) -> list[tuple[Node, ...]]:
        """The capture's buckets of key-equal nodes (fxoracle's keys)."""
        return list(graph.tracker.buckets().groups)

    # -- component `dedup` ----------------------------------------------------------------------
    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        gm, writes = graph.gm, written_args(graph)
        deps = self.ordering_deps(gm.graph, writes)
        done: list[list[Region]] = []
        refused: list[str] = []
        for group in self.groups(graph):
            order = {n: i for i, n in enumerate(gm.graph.nodes)}
            judged = [(r, self.refusal(r, group[0], writes, order)) for r in group]
            refused += [f"region at {r[0].name}: {why}" for r, why in judged if why]
            regions = [r for r, why in judged if not why]
            if len(regions) < 2 or regions[0] is not group[0] or closes_cycle(regions, deps):
                continue
            outputs = self.outputs(regions)
            call = install(gm, regions[0], outputs, deps)
            for region in regions:
                replace(gm.graph, region, call, outputs, deps)
            done.append(regions)
        self.stable_sort(gm.graph, {n: list(d) for n, d in deps.items()})
        gm.recompile()
        names = tuple(tuple(tuple(n.name for n in r) for r in g) for g in done)
        deps_out = {n: tuple(d) for n, d in deps.items()}
        return DedupOutput(gm, names, deps_out, refusals=tuple(refused))

    def refusal(
        self, region: Region, region0: Region, writes: Mapping[Node, list[Node]],
        order: Mapping[Node, int],
    ) -> str:  # fmt: skip
        """Why `region` cannot be replaced by a call of region 0's copy, or ""."""
        inside, nodes = set(region), list(order)
        span = nodes[min(map(order.__getitem__, region)) : max(map(order.__getitem__, region))]
        if wiring(region) != wiring(region0) or usages(region) != usages(region0):
            return "computes otherwise than region 0"
        values = [*operands(region), *region]
        if any(not isinstance(n.meta.get("example_value"), torch.Tensor) for n in values):
            return "a value is not a plain tensor"
        if any(self.effect(n, writes) for n in region):
            return "writes, draws or switches"
        if any(named(n, SWITCHES) for n in span):
            return "spans a global-state switch"
        read = {storage(a) for n in region for a in n.all_input_nodes} | set(map(storage, region))
        if any(storage(w) in read for n in span if n not in inside for w in writes.get(n, [])):
            return "an outside write of what it reads lies between its nodes"
        after = nodes[max(map(order.__getitem__, region)) + 1 :]
        if self.saved_then_written(region, writes, after):
            return "an operand is written after it"
        return self.aliasing(region)

    def saved_then_written(
        self, region: Region, writes: Mapping[Node, list[Node]], later: Sequence[Node]
    ) -> bool:
        """In training (an operand requires grad), torch's runtime saves every operand of the
        call for backward: a later write of one would fail it."""
        inputs = operands(region)
        if not any(n.meta["example_value"].requires_grad for n in inputs):
            return False
        saved = set(map(storage, inputs))
        return any(storage(w) in saved for n in later for w in writes.get(n, []))

    def effect(self, node: Node, writes: Mapping[Node, list[Node]]) -> bool:
        """`node` writes in place, draws random numbers or switches global state."""
        return node in writes or named(node, RANDOM) or named(node, SWITCHES)

    def aliasing(self, region: Region) -> str:
        """Operands and outputs must not share storage, a tuple output's elements included
        (torch's runtime assumes so)."""
        values = [*operands(region), *(region[p] for p in outputs_of(region))]
        found = [s for v in values for s in storages(v)]
        return "operands or outputs share storage" if len(set(found)) < len(found) else ""

    def outputs(self, regions: Sequence[Region]) -> list[int]:
        """The region positions any region's outside users need: every call returns them all."""
        return sorted({p for r in regions for p in outputs_of(r)})

    def ordering_deps(self, graph: torch.fx.Graph, writes: Mapping[Node, list[Node]]) -> Deps:
        """A write follows every earlier reader of what it writes and precedes every later one,
        through any view (readers by storage); draws keep their order; a global-state switch
        keeps its place."""
        deps: Deps = {n: {} for n in graph.nodes}
        order = {n: i for i, n in enumerate(graph.nodes)}
        for writer, written in writes.items():
            for node in self.readers(graph, written):
                if node is not writer:
                    before = order[node] < order[writer]
                    later, earlier = (writer, node) if before else (node, writer)
                    deps[later][earlier] = None
        for later, earlier in self.draw_order(graph):
            deps[later][earlier] = None
        switches = [n for n in graph.nodes if named(n, SWITCHES)]
        for s in switches:
            for node in graph.nodes:
                if node is not s and node.op != "output":
                    later, earlier = (s, node) if order[node] < order[s] else (node, s)
                    deps[later][earlier] = None
        return deps

    def draw_order(self, graph: torch.fx.Graph) -> list[tuple[Node, Node]]:
        """`(later, earlier)` for each draw and the draw before it: the numbers a draw returns
        depend on every draw before it, so draws keep their order."""
        drawn = [n for n in graph.nodes if named(n, RANDOM)]
        return list(zip(drawn[1:], drawn, strict=False))

    def readers(self, graph: torch.fx.Graph, written: Sequence[Node]) -> list[Node]:
        """Every node with an argument in the storage of what is written (its views too)."""
        stored = {storage(w) for w in written}
        return [n for n in graph.nodes if any(storage(a) in stored for a in n.all_input_nodes)]

    # -- component `sort` -----------------------------------------------------------------------
    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        nodes = list(graph.nodes)
        position = {n: i for i, n in enumerate(nodes)}
        waits = {n: {*n.all_input_nodes, *self.deps_of(deps, n)} for n in nodes}
        users: dict[Node, list[Node]] = {n: [] for n in nodes}
        for node, before in waits.items():
            for dep in before:
                users[dep].append(node)
        ready = [self._ranked(n, position) for n in nodes if not waits[n] and n.op != "output"]
        heapq.heapify(ready)
        placed: list[Node] = []
        while ready:
            node = nodes[heapq.heappop(ready)[1]]
            placed.append(node)
            for user in users[node]:
                waits[user].discard(node)
                if not waits[user] and user.op != "output":
                    heapq.heappush(ready, self._ranked(user, position))
        output = next(n for n in nodes if n.op == "output")
        assert len(placed) == len(nodes) - 1, "the dependencies have a cycle"
        for node in placed:
            output.prepend(node)

    def _ranked(self, node: Node, position: Mapping[Node, int]) -> tuple[int, int]:
        return self.rank(node, position[node]), position[node]

    def rank(self, node: Node, position: int) -> int:
        """The sort places the ready node of lowest rank first: the earliest."""
        return position

    def deps_of(self, deps: Mapping[Node, Sequence[Node]], node: Node) -> Sequence[Node]:
        return list(deps.get(node, ()))


def written_args(graph: CapturedGraph) -> dict[Node, list[Node]]:
    """The capture's mutation facts as `node -> the argument nodes it writes in place`: a
    position indexes the node's arguments flattened in `torch.fx.map_arg` order."""
    found: dict[Node, list[Node]] = {}
    for node, positions in graph.tracker.node_to_mutated_arg_positions.items():
        flat: list[Node] = []
        torch.fx.map_arg((node.args, node.kwargs), flat.append)
        found[node] = [flat[p] for p in positions if p < len(flat)]
    return found


def storage(node: Node) -> object:
    """The storage a node's tensor value lives in (views share their base's), or the node."""
    value = node.meta.get("example_value")
    if isinstance(value, torch.Tensor):
        try:
            return ("storage", value.untyped_storage()._cdata)
        except (NotImplementedError, RuntimeError):
            return node
    return node


def storages(node: Node) -> set[object]:
    """The storages of a node's value: its tensor's, or each tensor's of a tuple or list."""
    value = node.meta.get("example_value")
    if not isinstance(value, (tuple, list)):
        return {storage(node)}
    found: set[object] = set()
    for item in value:
        try:
            found.add(("storage", item.untyped_storage()._cdata))
        except (AttributeError, NotImplementedError, RuntimeError):
            found.add(node)
    return found


def named(node: Node, words: Sequence[str]) -> bool:
    if node.op not in ("call_function", "call_method"):
        return False
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    return any(w in str(name) for w in words)
