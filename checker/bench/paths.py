"""`make bench`: the plain path against the fast path (issue 33, "The plain path is the
definition").

The public entry points take the plain path, the one the spec states, unless asked for speed
(`fast=True`). For each entry point that has the switch, on the bench's graph of repeated blocks
(`checker.bench.blocks`), both paths are timed as `checker.bench.regions` times a call (CPU
seconds, best of `--repeat` samples); an entry point without the switch is timed once and
listed with no fast time. Which entry points take it is read from their signatures, so the bench
runs before and after they gain it. Sizes above `--torch-max` are skipped: the plain path may be
as slow as torch's. A measurement: `fxoracle bench` exits 0 whatever it says.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from checker.bench.blocks import BlockGraph, blocks_for, repeated_blocks
from checker.bench.regions import best_time
from reference.expand.regions import find_identical_regions, search_regions
from reference.replace.cycle import Contraction
from reference.sort.stable import stable_topological_sort
from reference.track.offline import track_graph

Call = Callable[[Mapping[str, bool]], object]  # one call of an entry point, given `fast=...` or not


@dataclass(frozen=True, slots=True)
class PathRow:
    """One entry point at one size: CPU seconds of the plain path and, if it has one, the fast."""

    nodes: int
    name: str
    plain_s: float
    fast_s: float | None


def takes_fast(*functions: Callable[..., object]) -> bool:
    """Whether any of `functions` has a `fast` parameter."""
    return any("fast" in inspect.signature(f).parameters for f in functions)


def _fast_to(function: Callable[..., object], switch: Mapping[str, bool]) -> Mapping[str, bool]:
    """`switch` if `function` takes it, else nothing."""
    return switch if takes_fast(function) else {}


def entry_points(bg: BlockGraph) -> list[tuple[str, bool, Call]]:
    """(name, whether it has a fast path, one call of it) for each entry point timed on `bg`."""
    graph = bg.graph
    tracker = track_graph(graph)
    regions = find_identical_regions(graph, tracker)[0]
    finder = next((f for f in (find_identical_regions, search_regions) if takes_fast(f)), None)
    cycle = Contraction.__init__, Contraction.cycle

    def find(kw: Mapping[str, bool]) -> object:
        if finder is search_regions:
            return search_regions(graph, tracker.buckets(), **kw)
        return find_identical_regions(graph, tracker, **kw)

    def refuse(kw: Mapping[str, bool]) -> object:
        made = Contraction(graph, {}, **_fast_to(Contraction.__init__, kw))
        return made.cycle(regions, **_fast_to(Contraction.cycle, kw))

    name = "search_regions" if finder is search_regions else "find_identical_regions"
    return [
        ("track_graph", takes_fast(track_graph), lambda kw: track_graph(graph, **kw)),
        (name, finder is not None, find),
        ("stable_topological_sort", takes_fast(stable_topological_sort),
         lambda kw: stable_topological_sort(graph, {}, **kw)),
        ("cycle refusal (Contraction)", takes_fast(*cycle), refuse),
    ]  # fmt: skip


def measure(bg: BlockGraph, repeat: int) -> list[PathRow]:
    """Time each entry point of `bg` on the plain path and, where it has one, on the fast."""
    rows = []
    for name, has_fast, call in entry_points(bg):
        plain_s = best_time(partial(call, {"fast": False} if has_fast else {}), repeat)
        fast_s = best_time(partial(call, {"fast": True}), repeat) if has_fast else None
        rows.append(PathRow(bg.n_nodes, name, plain_s, fast_s))
    return rows


def run(sizes: Sequence[int], repeat: int, kind: str, max_nodes: int) -> str:
    """Both paths of every entry point at each size up to `max_nodes`, as a table."""
    rows: list[PathRow] = []
    for size in sorted(set(sizes)):
        bg = repeated_blocks(blocks_for(size, kind), kind)
        if bg.n_nodes <= max_nodes:
            rows += measure(bg, repeat)
    lines = [f"plain path against fast path on {kind} blocks up to {max_nodes} nodes: CPU s "
             f"per call, best of {repeat} samples"]  # fmt: skip
    lines.append(f"{'nodes':>8}  {'entry point':<28} {'plain s':>9} {'fast s':>9}  plain/fast")
    for r in rows:
        fast = "-" if r.fast_s is None else f"{r.fast_s:.4f}"
        ratio = "no fast path" if r.fast_s is None else f"{r.plain_s / r.fast_s:.1f}x"
        lines.append(f"{r.nodes:8d}  {r.name:<28} {r.plain_s:9.4f} {fast:>9}  {ratio}")
    return "\n".join(lines) + "\n"
