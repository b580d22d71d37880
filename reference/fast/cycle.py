"""The cycle refusal with its search bounded by graph positions (spec chapter 03, RPL-25):
`FastContraction` answers as `reference.replace.cycle.Contraction` does
(`tests/reference/test_fast_cycle.py` proves it), a group costing what its window reaches
rather than the whole graph below it.

Every edge goes from an earlier to a later position (the graph is in order, and so are its
ordering deps); only a contracted set can lead back, from its last member to its first. So a path
that leaves a region and comes back never visits a node later than the *window*: the last
position of the group's regions, raised to the last position of every contracted set that starts
at or before it. Nodes past it lead only further on, so the search skips them and finds the same
cycle first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch.fx

from reference.replace.cycle import Contraction

Node = torch.fx.Node


class FastContraction(Contraction):
    """`Contraction` with the contracted sets' spans kept for the window."""

    def __init__(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        super().__init__(graph, deps)
        self.spans = _Spans(len(self.nodes))

    def replaced(self, region: Sequence[Node]) -> None:
        super().replaced(region)
        first = next((self.index[n] for n in region if n in self.index), None)
        if first is not None:
            members = self.members.get(self.sets.find(first), [first])
            self.spans.add(members[0], members[-1])

    def window(self, last: int) -> int:
        """`last` raised until no contracted set that starts at or before it ends after it."""
        while (end := self.spans.latest_end(last)) > last:
            last = end
        return last


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
