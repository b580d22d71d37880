"""The replacer's gate: before a region group is outlined, prove it safe or veto it (spec
chapter 06, CHK-11 and CHK-12).

`make_gate(gm, deps)` returns the callable `deduplicate(gm, tracker, gate=...)` calls with each
group and its plan. It refuses (returns `(region index, "CHK-n: reason")`) unless it proves

  (a) CHK-11: contracting every region of the group to one node, together with the regions
      earlier groups replaced, leaves the dependency graph (data and extra deps) acyclic;
  (b) CHK-12: corresponding nodes of all regions have provably equal dtype, device, symbolic
      sizes and strides (z3 under the ShapeEnv facts).

An unknown verdict refuses too. The dependency graph is built once, over `gm`'s nodes at
creation; contraction is a union-find view over it, so a group costs one search over what its
regions reach, not a rebuild. A region of an accepted group counts as replaced once the
replacer has erased its nodes (nodes it keeps, such as flattened getitems, stay outside).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import torch
import torch.fx

from checker.proof.shape_check import compare_values, facts_of, meta_value
from checker.proof.shapes import ShapeFacts
from checker.proof.verdict import Holds, Violated
from reference.deps import OrderingDeps
from reference.outline import OutlinePlan

Node = torch.fx.Node
Group = Sequence[Sequence[Node]]


def make_gate(
    gm: torch.fx.GraphModule,
    deps: OrderingDeps | Mapping[Node, Sequence[Node]] | None = None,
    *,
    timeout_ms: int = 2000,
) -> ReplacementGate:
    """The gate for `gm` with extra dependencies `deps` (`node -> nodes it must follow`)."""
    mapping = deps.as_mapping() if isinstance(deps, OrderingDeps) else dict(deps or {})
    return ReplacementGate(_Quotient(gm.graph, mapping), facts_of([gm]), timeout_ms)


class ReplacementGate:
    """Callable as `gate(group, plan) -> (region index, reason) | None` (CHK-11, CHK-12)."""

    def __init__(self, quotient: _Quotient, facts: ShapeFacts, timeout_ms: int) -> None:
        self._quotient, self._facts, self._timeout_ms = quotient, facts, timeout_ms

    def __call__(self, group: Group, plan: OutlinePlan) -> tuple[int, str] | None:
        self._quotient.commit_replaced()
        refusal = self._quotient.cycle_refusal(group)
        if refusal is None:
            refusal = shape_refusal(group, self._facts, self._timeout_ms)
        if refusal is None:
            self._quotient.remember(group)
        return refusal


def shape_refusal(group: Group, facts: ShapeFacts, timeout_ms: int) -> tuple[int, str] | None:
    """The first region whose nodes' shapes are not proved equal to region 0's (CHK-12)."""
    for k, region in enumerate(group[1:], start=1):
        if len(region) != len(group[0]):
            return k, f"CHK-12: region {k} has {len(region)} nodes, region 0 {len(group[0])}"
        for node, reference in zip(region, group[0], strict=True):
            verdict = compare_values(meta_value(node), meta_value(reference), facts, timeout_ms)
            if isinstance(verdict, Holds):
                continue
            kind = "differ" if isinstance(verdict, Violated) else "are not proved equal"
            detail = verdict.witness if isinstance(verdict, Violated) else verdict.reason
            return k, f"CHK-12: shapes of {node.name} and {reference.name} {kind}: {detail}"
    return None


class _Quotient:
    """The dependency graph of the nodes `gm` had at creation, with contracted node sets."""

    def __init__(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        self.nodes: list[Node] = list(graph.nodes)
        self.index = {node: i for i, node in enumerate(self.nodes)}
        self.succ: list[list[int]] = [[] for _ in self.nodes]
        for node in self.nodes:
            for arg in node.all_input_nodes:
                self.succ[self.index[arg]].append(self.index[node])
        for node, own in deps.items():
            for dep in own:
                if node in self.index and dep in self.index:
                    self.succ[self.index[dep]].append(self.index[node])
        self.parent = list(range(len(self.nodes)))
        self.members: dict[int, list[int]] = {}  # representative -> its contracted set
        self.pending: list[Sequence[Node]] = []

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, items: Sequence[int]) -> None:
        reps = list(dict.fromkeys(self.find(i) for i in items))
        if len(reps) < 2:
            return
        reps.sort(key=lambda r: -len(self.members.get(r, [r])))
        root = reps[0]
        merged = self.members.pop(root, [root])
        for rep in reps[1:]:
            self.parent[rep] = root
            merged.extend(self.members.pop(rep, [rep]))
        self.members[root] = merged

    def remember(self, group: Group) -> None:
        self.pending.extend(group)

    def commit_replaced(self) -> None:
        """Contract the erased nodes of every region remembered from accepted groups."""
        for region in self.pending:
            erased = [self.index[n] for n in region if n in self.index and n._erased]
            self.union(erased)
        self.pending.clear()

    def cycle_refusal(self, group: Group) -> tuple[int, str] | None:
        """(region index, reason) when contracting the group's regions closes a cycle."""
        for k, region in enumerate(group):
            newer = next((n for n in region if n not in self.index), None)
            if newer is not None:
                return k, f"CHK-11: {newer.name} was created after the gate; cannot prove"
        view = _View(self, group)
        cycle = view.find_cycle()
        if cycle is None:
            return None
        regions = [r for r in map(view.region_of, cycle) if r is not None]
        first = min(regions, default=0)
        path = " -> ".join(view.describe(label) for label in [*cycle, cycle[0]])
        return first, f"CHK-11: contracting the regions closes the cycle {path}"


class _View:
    """The quotient with one group's regions contracted too, labels: representatives, or
    `len(nodes) + k` for region k of the group."""

    def __init__(self, quotient: _Quotient, group: Group) -> None:
        self.q = quotient
        self.base = len(quotient.nodes)
        self.merged: dict[int, int] = {}
        self.region_members: list[list[int]] = []
        for k, region in enumerate(group):
            members: list[int] = []
            for node in region:
                rep = quotient.find(quotient.index[node])
                if rep not in self.merged:
                    self.merged[rep] = self.base + k
                    members.extend(quotient.members.get(rep, [rep]))
            self.region_members.append(members)

    def label(self, i: int) -> int:
        rep = self.q.find(i)
        return self.merged.get(rep, rep)

    def region_of(self, label: int) -> int | None:
        return label - self.base if label >= self.base else None

    def members(self, label: int) -> list[int]:
        if label >= self.base:
            return self.region_members[label - self.base]
        return self.q.members.get(label, [label])

    def successors(self, label: int) -> Iterator[int]:
        for member in self.members(label):
            for j in self.q.succ[member]:
                other = self.label(j)
                if other != label:
                    yield other

    def describe(self, label: int) -> str:
        region = self.region_of(label)
        if region is not None:
            return f"region {region}"
        names = [self.q.nodes[m].name for m in sorted(self.members(label))]
        if len(names) == 1:
            return names[0]
        return "replaced [" + ", ".join(names[:3]) + (", ...]" if len(names) > 3 else "]")

    def find_cycle(self) -> list[int] | None:
        """A cycle through a region of the group, by depth-first search from each region."""
        done: set[int] = set()
        for start in range(self.base, self.base + len(self.region_members)):
            if start in done:
                continue
            cycle = self._search(start, done)
            if cycle is not None:
                return cycle
        return None

    def _search(self, start: int, done: set[int]) -> list[int] | None:
        path, on_path = [start], {start}
        stack = [self.successors(start)]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif nxt in on_path:
                return path[path.index(nxt) :]
            elif nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                stack.append(self.successors(nxt))
        return None
