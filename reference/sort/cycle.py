"""One cycle witness for the reference: a cycle found by depth-first search (spec chapter 04,
SRT-5; chapter 03, RPL-25).

`find_cycle(starts, successors)` returns a cycle reachable from `starts`, its nodes in the
order the edges run, or None. The sort follows "waits on" with it (SRT-5); the replacer's
contraction searches its quotient graph with it (RPL-25).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def find_cycle(starts: Iterable[T], successors: Callable[[T], Iterable[T]]) -> list[T] | None:
    """A cycle reachable from `starts` (tried in order): `found[j + 1]` is a successor of
    `found[j]` and `found[0]` one of `found[-1]`; None when there is none. A node whose
    successors were all searched is not searched again, from any start."""
    done: set[T] = set()
    for start in starts:
        if start in done:
            continue
        path, on_path = [start], {start}
        stack: list[Iterator[T]] = [iter(successors(start))]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif step in on_path:
                return path[path.index(step) :]
            elif step not in done:
                path.append(step)
                on_path.add(step)
                stack.append(iter(successors(step)))
    return None
