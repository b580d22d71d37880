"""`make bench`: region finding of the reference against torch (spec chapter 02, EXP-11;
chapter 01, TRK-13).

For each size, a graph of repeated blocks (`checker.bench.blocks`) is keyed and its regions
found by each side, and both steps are timed: keying (the reference keys the captured graph
offline with `track_graph_fast`, `track_graph`'s fast path; torch has only live keying,
`track_node` on every node, as Dynamo calls it) and region finding proper
(`get_identical_regions`; the reference's with `fast=True`, `reference.fast.expand`). CPU
seconds per call, best of `--repeat` samples, each looping short calls for at least
`MIN_SAMPLE_S`, garbage collector off, as `timeit` does. CPU time, not wall time, because the
code is single-threaded Python and the machines it runs on are shared: wall time would measure
the neighbours. Peak memory of one more region finding is measured separately with
`tracemalloc`.
Torch runs only up to `--torch-max` nodes: its ancestor sets are quadratic (B5). Where torch ran,
both results are compared by node names (EXP-13). The acceptance targets are printed with
PASS/FAIL; `fxoracle bench` exits 0 whatever they say (a measurement tool).
"""

from __future__ import annotations

import gc
import json
import math
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch.fx
from torch._dynamo.graph_region_tracker import GraphRegionTracker as TorchTracker

from checker.bench import floor
from checker.bench.blocks import BlockGraph, blocks_for, feed, repeated_blocks
from checker.io.out_paths import marked
from checker.io.reports import write_atomically
from reference.expand.regions import find_identical_regions
from reference.fast.keys import track_graph_fast
from reference.torch_version import TORCH

Node = torch.fx.Node
Groups = tuple[tuple[tuple[str, ...], ...], ...]  # (groups, regions, node names)
Finder = Callable[[], list[list[list[Node]]]]

SPEEDUP_MIN = 50.0  # torch / reference keying + region finding at the largest size torch runs
TOTAL_S_MAX = 0.5  # reference keying + region finding at the largest size (~38k nodes)
EXPONENT_MAX = 1.1  # reference keying + finding time ~ n^e from the smallest to the largest size
PEAK_MB_MAX = 500.0  # reference peak at the largest size
MB = 1e6
MIN_SAMPLE_S = 0.2  # short calls are repeated within a sample so that it lasts this long


@dataclass(frozen=True, slots=True)
class Measure:
    """One implementation at one size: best times (s) of keying and of region finding, the
    finding's peak traced memory (MB), its groups."""

    key_s: float
    seconds: float
    peak_mb: float
    groups: Groups

    @property
    def total_s(self) -> float:
        return self.key_s + self.seconds


@dataclass(frozen=True, slots=True)
class Row:
    """One size: the graph's node and block counts, the reference and, if it ran, torch."""

    nodes: int
    blocks: int
    ref: Measure
    torch: Measure | None

    @property
    def ratio(self) -> float | None:
        """torch / reference region-finding time."""
        return None if self.torch is None else self.torch.seconds / self.ref.seconds

    @property
    def total_ratio(self) -> float | None:
        """torch / reference time of keying and region finding together."""
        return None if self.torch is None else self.torch.total_s / self.ref.total_s

    @property
    def same(self) -> bool | None:
        """Whether both found the same groups, by node names (EXP-13)."""
        return None if self.torch is None else self.torch.groups == self.ref.groups


@dataclass(frozen=True, slots=True)
class Target:
    """An acceptance target: `value` must be <= (or >= when `at_least`) `bound`."""

    name: str
    value: float | None  # None: not measured at these sizes
    bound: float
    at_least: bool

    @property
    def verdict(self) -> str:
        if self.value is None:
            return "N/A"
        ok = self.value >= self.bound if self.at_least else self.value <= self.bound
        return "PASS" if ok else "FAIL"


def names(groups: list[list[list[Node]]]) -> Groups:
    return tuple(tuple(tuple(n.name for n in region) for region in g) for g in groups)


def cpu_seconds(find: Callable[[], object], loops: int) -> float:
    """CPU seconds per call over `loops` calls, garbage collector off (as in `timeit`)."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        for _ in range(loops):
            find()
        return (time.process_time() - start) / loops
    finally:
        gc.enable()


def best_time(find: Callable[[], object], repeat: int) -> float:
    """Best of `repeat` samples; a sample loops until it lasts `MIN_SAMPLE_S` (timeit's autorange).

    The first call calibrates the loop count and counts as a sample when one call is enough.
    """
    first = cpu_seconds(find, 1)
    loops = max(1, math.ceil(MIN_SAMPLE_S / max(first, 1e-6)))
    samples = [first] if loops == 1 else []
    while len(samples) < repeat:
        samples.append(cpu_seconds(find, loops))
    return min(samples)


def peak_mb(find: Finder) -> tuple[float, Groups]:
    """Peak traced memory of one call (MB), and the groups it found by node names."""
    gc.collect()
    tracemalloc.start()
    try:
        groups = find()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / MB, names(groups)


def measure(key: Callable[[], object], find: Finder, repeat: int) -> Measure:
    """Time `key` and `find` (without tracemalloc), then measure `find`'s peak memory."""
    key_s, seconds = best_time(key, repeat), best_time(find, repeat)
    return Measure(key_s, seconds, *peak_mb(find))


def bench_size(bg: BlockGraph, repeat: int, with_torch: bool) -> Row:
    """Measure each side's keying and region finding on `bg`."""
    ref = track_graph_fast(bg.graph)
    ref_measure = measure(
        lambda: track_graph_fast(bg.graph),
        lambda: find_identical_regions(bg.graph, ref, fast=True),
        repeat,
    )
    torch_measure = None
    if with_torch:
        theirs = TorchTracker()
        feed(theirs, bg)
        torch_measure = measure(lambda: feed(TorchTracker(), bg),
                                lambda: theirs.get_identical_regions(bg.graph), repeat)  # fmt: skip
    return Row(bg.n_nodes, bg.n_blocks, ref_measure, torch_measure)


def exponent(rows: Sequence[Row]) -> float | None:
    """log(t2/t1) / log(n2/n1) of the reference's keying and region finding together, from the
    smallest to the largest size."""
    if len(rows) < 2 or rows[0].nodes == rows[-1].nodes:
        return None
    first, last = rows[0], rows[-1]
    return math.log(last.ref.total_s / first.ref.total_s) / math.log(last.nodes / first.nodes)


def targets(rows: Sequence[Row]) -> list[Target]:
    """The acceptance targets, each at the size it is defined for."""
    with_torch = [r for r in rows if r.torch is not None]
    vs = with_torch[-1] if with_torch else None
    first, last = rows[0], rows[-1]
    at = f"{vs.nodes if vs else '?'} nodes"
    return [
        Target(f"region finding (key + find) speedup over torch at {at} >= {SPEEDUP_MIN:g}x",
               vs.total_ratio if vs else None, SPEEDUP_MIN, at_least=True),
        Target(f"reference keying + finding at {last.nodes} nodes <= {TOTAL_S_MAX:g} s",
               last.ref.total_s, TOTAL_S_MAX, at_least=False),
        Target(f"scaling exponent of keying + finding, {first.nodes} to {last.nodes} nodes "
               f"<= {EXPONENT_MAX:g}", exponent(rows), EXPONENT_MAX, at_least=False),
        Target(f"reference peak at {last.nodes} nodes <= {PEAK_MB_MAX:g} MB",
               last.ref.peak_mb, PEAK_MB_MAX, at_least=False),
    ]  # fmt: skip


def _cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


HEAD = ("   nodes blocks | ref: key s  find s | torch: key s  find s | torch/ref: find  "
        "all | ref MB torch MB | groups regions same")  # fmt: skip


def table(rows: Sequence[Row]) -> str:
    """The measurements as a fixed-width table, one line per size."""
    lines = [HEAD]
    for r in rows:
        t = r.torch
        t_key, t_find, t_mb = (None, None, None) if t is None else (t.key_s, t.seconds, t.peak_mb)
        same = "-" if r.same is None else ("yes" if r.same else "NO")
        regions = sum(len(g) for g in r.ref.groups)
        lines.append(
            f"{r.nodes:8d} {r.blocks:6d} | {r.ref.key_s:10.4f} {r.ref.seconds:7.4f} | "
            f"{_cell(t_key, '12.4f'):>12} {_cell(t_find, '7.4f'):>7} | "
            f"{_cell(r.ratio, '15.1f'):>15} {_cell(r.total_ratio, '4.1f'):>4} | "
            f"{r.ref.peak_mb:6.1f} {_cell(t_mb, '8.1f'):>8} | "
            f"{len(r.ref.groups):6d} {regions:7d} {same:>4}"
        )
    return "\n".join(lines)


def report(rows: Sequence[Row], goals: Sequence[Target]) -> str:
    lines = [table(rows), ""]
    for g in goals:
        lines.append(f"{g.verdict:4}  {g.name}: {_cell(g.value, '.2f')}")
    return "\n".join(lines)


def to_json(
    kind: str, repeat: int, rows: Sequence[Row], goals: Sequence[Target]
) -> dict[str, object]:
    """The numbers as plain JSON data (groups are summarized by count, not listed)."""
    return {
        "kind": kind,
        "repeat": repeat,
        "exponent": exponent(rows),
        "rows": [
            {
                "nodes": r.nodes,
                "blocks": r.blocks,
                "ref_key_seconds": r.ref.key_s,
                "ref_seconds": r.ref.seconds,
                "ref_peak_mb": r.ref.peak_mb,
                "torch_key_seconds": None if r.torch is None else r.torch.key_s,
                "torch_seconds": None if r.torch is None else r.torch.seconds,
                "torch_peak_mb": None if r.torch is None else r.torch.peak_mb,
                "ratio": r.ratio,
                "total_ratio": r.total_ratio,
                "groups": len(r.ref.groups),
                "regions": sum(len(g) for g in r.ref.groups),
                "same_groups": r.same,
            }
            for r in rows
        ],
        "targets": [asdict(g) | {"verdict": g.verdict} for g in goals],
    }


def run(sizes: Sequence[int], repeat: int = 3, kind: str = "transformer",
        torch_max: int = 10000, json_path: Path | None = None) -> str:  # fmt: skip
    """Run the benchmark; the table and targets as text; JSON written if asked."""
    rows: list[Row] = []
    for size in sorted(set(sizes)):
        bg = repeated_blocks(blocks_for(size, kind), kind)
        rows.append(bench_size(bg, repeat, bg.n_nodes <= torch_max))
    limit = floor.measure(bg, lambda call: best_time(call, repeat))  # the largest graph
    goals = targets(rows)
    if json_path is not None:
        data = marked("bench", to_json(kind, repeat, rows, goals) | {"floor": asdict(limit)})
        write_atomically(json_path, json.dumps(data, indent=2) + "\n")  # FIL-3
    head = f"keying (key) and get_identical_regions (find) on {kind} blocks, against "
    head += f"{TORCH.label}: CPU s per call, best of {repeat} samples"
    tail = floor.line(limit, rows[-1].ref.key_s)
    return head + "\n" + report(rows, goals) + "\n" + tail + "\n"
