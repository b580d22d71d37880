"""One cycle witness for the reference: a cycle found by depth-first search (spec chapter 04,
SRT-5; chapter 03, RPL-25). torch's sort only says that it failed (`_has_cycle` is a boolean);
this module is what the reference adds to it, counted apart by `fxoracle bench --size`.

`find_cycle(starts, successors)` returns a cycle reachable from `starts`, its nodes in the
order the edges run, or None. The sort follows "waits on" with it for its witness `Cycle`
(`waiting_cycle`) and names it in `NoOrder` (SRT-5); the replacer's contraction searches its
quotient graph with it (RPL-25).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from reference.errors import FxOracleError

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


@dataclass(frozen=True, slots=True)
class Cycle:
    """Witness that no order exists: `path[j]` must precede `path[j + 1]`; `path[0] == path[-1]`.

    The path starts at its smallest position, so the witness is deterministic (SRT-5).
    """

    path: tuple[int, ...]


def waiting_cycle(waiting: Mapping[int, Sequence[int]]) -> Cycle:
    """The sort's witness, from what is left waiting when the sort stops (`blocker -> waiters`):
    follow "waits on" from the smallest waiting node until a node repeats.

    Every node left unplaced waits on an unplaced node (otherwise it would have been re-queued),
    so the walk stays among them and must close a cycle of real dependencies. SRT-5.
    """
    waits_on = {node: blocker for blocker, waiters in waiting.items() for node in waiters}
    found = find_cycle([min(waits_on)], lambda node: (waits_on[node],))
    assert found is not None, "SRT-5: every unplaced node waits on an unplaced node"
    loop = found[::-1]  # reversed: each node now precedes the next
    start = loop.index(min(loop))
    return Cycle(tuple([*loop[start:], *loop[:start], loop[start]]))


class NoOrder(FxOracleError, AssertionError):
    """No topological order exists: fxoracle's error type, and torch's (`AssertionError`), so
    code written against torch's sort catches it too (SRT-5)."""

    @classmethod
    def naming(cls, cycle: Cycle, names: Sequence[str]) -> NoOrder:
        """The error naming `cycle`, `names[i]` the name of position `i`."""
        path = " -> ".join(names[i] for i in cycle.path)
        return cls(f"SRT-5: no topological order exists: cycle {path}")
