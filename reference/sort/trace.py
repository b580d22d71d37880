"""The sort's trace, for a reader (spec chapter 04's visit-by-visit picture): torch's sort
keeps no record of its visits; this module is what the reference adds, counted apart by
`fxoracle bench --size`. `order_indices(n, deps, trace)` calls `trace` with a `SortStep` after
every visit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SortStep:
    """One visit of `order_indices`: the node visited, the dep it now waits on (None: it was
    placed), and the three lists after the visit. SRT-2."""

    node: int
    waits_on: int | None
    pending: tuple[int, ...]  # the stack: the next node to visit is first here
    waiting: tuple[tuple[int, tuple[int, ...]], ...]  # blocker -> its waiters, in arrival order
    order: tuple[int, ...]

    @classmethod
    def of(
        cls,
        node: int,
        waits_on: int | None,
        pending: Sequence[int],
        waiting: Mapping[int, Sequence[int]],
        order: Sequence[int],
    ) -> SortStep:
        """The step from the sort's own lists (`pending` a stack, its top last), copied."""
        lists = tuple((blocker, tuple(waiters)) for blocker, waiters in waiting.items())
        return cls(node, waits_on, tuple(reversed(pending)), lists, tuple(order))


Trace = Callable[[SortStep], None]
