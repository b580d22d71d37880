"""Contraction: would replacing a group's regions by calls close a cycle? (spec chapter 03,
RPL-25).

Each call runs all of its region's nodes at one point, so the dependency graph (data edges and
the ordering deps of chapter 04) with each replaced region contracted to one node must stay
acyclic, or no order can run the result. A region can be safe to contract alone yet close a
cycle with another region of its group (`b0 = a0 + a1; b1 = a1 + a0`) or with a region replaced
earlier. `Contraction(graph, deps)` builds the dependency graph once, before anything is
replaced; `cycle(regions)` searches for a cycle through the regions contracted, together with
those the replacer reported as replaced (`replaced`): a union-find view, never a rebuild.

The search is bounded by graph positions. Every edge goes from an earlier to a later position
(the graph is in order, and so are its ordering deps); only a contracted set can lead back, from
its last member to its first. So a path that leaves a region and comes back never visits a node
later than `bound`: the last position of the group's regions, raised to the last position of
every contracted set that starts at or before it (`_Spans`). The search skips the rest, and a
group costs what its window reaches, not the whole graph below it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import torch.fx

Node = torch.fx.Node
Regions = Sequence[Sequence[Node]]


class Contraction:
    """The dependency graph of a graph's nodes at creation, with contracted node sets."""

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
        self.first: dict[int, int] = {}  # representative -> the first position of its set
        self.spans = _Spans(len(self.nodes))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def replaced(self, region: Sequence[Node]) -> None:
        """The replacer erased `region`'s nodes for one call: they stay contracted."""
        items = [self.index[n] for n in region if n in self.index]
        reps = list(dict.fromkeys(self.find(i) for i in items))
        if len(reps) < 2:
            return
        reps.sort(key=lambda r: -len(self.members.get(r, [r])))
        root = reps[0]
        merged = self.members.pop(root, [root])
        for rep in reps[1:]:
            self.parent[rep] = root
            merged.extend(self.members.pop(rep, [rep]))
            self.first.pop(rep, None)
        self.members[root] = merged
        self.first[root] = min(merged)
        self.spans.add(min(merged), max(merged))

    def cycle(self, regions: Regions) -> tuple[int, str] | None:
        """(lowest region index on the cycle, the cycle) when contracting `regions` closes one,
        e.g. `region 0 -> add_ -> region 0`; None when they are safe (RPL-25)."""
        for k, region in enumerate(regions):
            newer = next((n for n in region if n not in self.index), None)
            if newer is not None:
                return k, f"{newer.name} was created after the search began"
        view = _View(
            self, regions, self.spans.bound(max(self.index[n] for r in regions for n in r))
        )
        found = view.find_cycle()
        if found is None:
            return None
        in_regions = [r for r in map(view.region_of, found) if r is not None]
        path = " -> ".join(view.label_name(label) for label in [*found, found[0]])
        return min(in_regions, default=0), path


class _View:
    """The contraction with some regions contracted too; labels: representatives, or
    `len(nodes) + k` for region k."""

    def __init__(self, base: Contraction, regions: Regions, bound: int) -> None:
        self.q = base
        self.base = len(base.nodes)
        self.bound = bound  # no node after it is on a cycle through the regions
        self.merged: dict[int, int] = {}
        self.region_members: list[list[int]] = []
        for k, region in enumerate(regions):
            members: list[int] = []
            for node in region:
                rep = base.find(base.index[node])
                if rep not in self.merged:
                    self.merged[rep] = self.base + k
                    members.extend(base.members.get(rep, [rep]))
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
                if other != label and self.first(other) <= self.bound:
                    yield other

    def first(self, label: int) -> int:
        """The first graph position of a label's members."""
        if label >= self.base:
            return min(self.region_members[label - self.base])
        return self.q.first.get(label, label)

    def label_name(self, label: int) -> str:
        region = self.region_of(label)
        if region is not None:
            return f"region {region}"
        names = [self.q.nodes[m].name for m in sorted(self.members(label))]
        if len(names) == 1:
            return names[0]
        return "replaced [" + ", ".join(names[:3]) + (", ...]" if len(names) > 3 else "]")

    def find_cycle(self) -> list[int] | None:
        """A cycle through one of the regions, by depth-first search from each."""
        done: set[int] = set()
        for start in range(self.base, self.base + len(self.region_members)):
            if start not in done:
                found = self._search(start, done)
                if found is not None:
                    return found
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


class _Spans:
    """The contracted sets' spans, for one query: the latest end of a set that starts at or
    before a position. A Fenwick tree of maxima over start positions: a set merged into a larger
    one leaves a span the larger one covers, which changes no answer."""

    def __init__(self, size: int) -> None:
        self.tree = [-1] * (size + 1)

    def add(self, first: int, last: int) -> None:
        i = first + 1
        while i < len(self.tree):
            self.tree[i] = max(self.tree[i], last)
            i += i & -i

    def latest_end(self, position: int) -> int:
        """The latest last position of a set whose first position is at most `position`."""
        found, i = -1, min(position + 1, len(self.tree) - 1)
        while i > 0:
            found = max(found, self.tree[i])
            i -= i & -i
        return found

    def bound(self, last: int) -> int:
        """`last` raised until no set that starts at or before it ends after it."""
        while (end := self.latest_end(last)) > last:
            last = end
        return last
