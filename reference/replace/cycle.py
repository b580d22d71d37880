"""The cycle refusal: would replacing a group's regions by calls close a cycle? (spec chapter
03, RPL-25).

Each call runs all of its region's nodes at one point, so the dependency graph (data edges and
the ordering deps of chapter 04) with each replaced region contracted to one node must stay
acyclic, or no order can run the result. A region can be safe to contract alone yet close a
cycle with another region of its group (`b0 = a0 + a1; b1 = a1 + a0`) or with a region replaced
earlier. `Contraction(graph, deps)` builds the dependency graph once, before anything is
replaced, and keeps the regions replaced since contracted (`replaced`, a union-find);
`cycle(regions)` contracts `regions` too, in a view, and searches depth-first from each for a
path back to it. `reference.fast.cycle` bounds that search; the answer is the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch.fx

from reference.effects.alias_db import UnionFind
from reference.sort.cycle import find_cycle

Node = torch.fx.Node
Regions = Sequence[Sequence[Node]]


@dataclass(frozen=True, slots=True)
class Cycle:
    """The cycle contracting closes (`region 0 -> add_ -> region 0`), and the lowest region on
    it."""

    region: int
    path: str


class Contraction:
    """The dependency graph of a graph's nodes at creation, with the replaced regions contracted.
    Nodes are graph positions; a contracted set is named by its first position."""

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
        self.sets = UnionFind(len(self.nodes))
        self.members: dict[int, list[int]] = {}  # a contracted set's name -> its positions

    def replaced(self, region: Sequence[Node]) -> None:
        """The replacer erased `region`'s nodes for one call: they stay contracted."""
        names = {self.sets.find(self.index[n]) for n in region if n in self.index}
        if len(names) < 2:
            return
        merged = sorted(m for name in names for m in self.members.pop(name, [name]))
        for name in names:
            self.sets.union(merged[0], name)
        self.members[merged[0]] = merged

    def window(self, last: int) -> int:
        """The last position a cycle through regions ending at `last` can visit: any, here."""
        return len(self.nodes)

    def cycle(self, regions: Regions) -> Cycle | None:
        """The cycle contracting `regions` closes, or None when they are safe (RPL-25)."""
        for k, region in enumerate(regions):
            newer = next((n for n in region if n not in self.index), None)
            if newer is not None:
                return Cycle(k, f"{newer.name} was created after the search began")
        view = _View(self, regions)
        found = view.find_cycle(self.window(max(self.index[n] for r in regions for n in r)))
        if found is None:
            return None
        on_cycle = [view.region[name] for name in found if name in view.region]
        path = " -> ".join(view.label(name) for name in [*found, found[0]])
        return Cycle(min(on_cycle), path)


class _View:
    """The contraction with `regions` contracted too: region k is named by its first position
    (`region[name] == k`)."""

    def __init__(self, base: Contraction, regions: Regions) -> None:
        self.base = base
        self.merged: dict[int, int] = {}  # a set's name -> the name of the region holding it
        self.region: dict[int, int] = {}
        self.own: dict[int, list[int]] = {}  # a region's name -> its positions
        for k, region in enumerate(regions):
            found = (base.sets.find(base.index[n]) for n in region)
            names = [name for name in dict.fromkeys(found) if name not in self.merged]
            members = [m for name in names for m in base.members.get(name, [name])]
            self.region[min(members)] = k
            self.own[min(members)] = members
            self.merged.update(dict.fromkeys(names, min(members)))

    def name(self, position: int) -> int:
        found = self.base.sets.find(position)
        return self.merged.get(found, found)

    def members(self, name: int) -> list[int]:
        return self.own.get(name) or self.base.members.get(name, [name])

    def successors(self, name: int, bound: int) -> Iterator[int]:
        """The names one edge leads to from `name`'s members; none starting after `bound`."""
        for member in self.members(name):
            for j in self.base.succ[member]:
                other = self.name(j)
                if other != name and other <= bound:
                    yield other

    def label(self, name: int) -> str:
        if name in self.region:
            return f"region {self.region[name]}"
        names = [self.base.nodes[m].name for m in self.members(name)]
        if len(names) == 1:
            return names[0]
        return "replaced [" + ", ".join(names[:3]) + (", ...]" if len(names) > 3 else "]")

    def find_cycle(self, bound: int) -> list[int] | None:
        """A cycle through one of the regions (the one cycle witness, `find_cycle`)."""
        return find_cycle(self.region, lambda name: self.successors(name, bound))
