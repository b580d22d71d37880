"""Delta debugging: a small subsequence that keeps a property (spec chapter 08, DIF-7).

`ddmin` is Zeller's algorithm (complements first) under a budget of tries, over any sequence and
any predicate: pure, no I/O and no torch. What the units are and what "keeps" means is the
caller's (`source_reduce`: statements of a model file, `graph_reduce`: nodes of a graph).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
BUDGET = 24  # tries per shrink: a try costs one or two captures (~0.2-1 s)


def ddmin(units: Sequence[T], keeps: Callable[[tuple[T, ...]], bool], budget: int) -> tuple[T, ...]:
    """A 1-minimal-ish subsequence of `units` that `keeps`, trying at most `budget` subsets."""
    current, n, tries = tuple(units), 2, 0
    while len(current) >= 2 and tries < budget:
        size = -(-len(current) // n)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        for i in range(len(chunks)):
            candidate = tuple(u for j, c in enumerate(chunks) if j != i for u in c)
            tries += 1
            if keeps(candidate):
                current, n = candidate, max(n - 1, 2)
                break
            if tries >= budget:
                return current
        else:
            if n >= len(current):
                return current
            n = min(2 * n, len(current))
    return current
