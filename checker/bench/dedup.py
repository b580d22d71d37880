"""`make bench`, part two: deduplication and its check against graph size (spec chapter 03,
RPL-10; chapter 06).

Graphs of `n` segments of 4 residual MLP blocks each (`checker.bench.blocks.repeated_segments`): one
region group per segment, so the number of groups grows with the graph. Each size is keyed, then
expanded, outlined and sorted by `reference.deduplicate(..., fast=True)` (every speed-up of
`reference.fast`; the plain path's times are `checker.bench.paths`'s table), then the result
is checked against a copy of the original (`check_transformation`: every obligation, numbers on
random inputs included); the table gives CPU seconds of each and the scaling exponent of the
dedup from the smallest to the largest size, and the check at the size nearest 10k nodes
against its bound (a measurement: `fxoracle bench` exits 0 whatever it says).
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch

from checker.bench.blocks import nodes_per_block, repeated_segments
from checker.proof.check import check_transformation
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from reference.track.tracker import GraphRegionTracker

T = TypeVar("T")
PER_SEGMENT = 4
EXPONENT_MAX = 1.2
CHECK_AT, CHECK_S_MAX = 10_000, 5.0  # check_transformation at about 10k nodes: under 5 s


@dataclass(frozen=True, slots=True)
class DedupRow:
    nodes: int
    groups: int
    calls: int
    seconds: float
    check_s: float
    ok: bool


def measure(n_nodes: int) -> DedupRow:
    """Build, key and deduplicate one graph of about `n_nodes` nodes; time the dedup call."""
    n_segments = max(1, round(n_nodes / (PER_SEGMENT * nodes_per_block("mlp"))))
    bg = repeated_segments(n_segments, PER_SEGMENT)
    tracker = GraphRegionTracker()
    for node, tx in bg.sites:
        tracker.track_node(tx, node)
    gm = torch.fx.GraphModule(torch.nn.Module(), bg.graph)
    original = copy_graph_module(gm).gm
    nodes = len(gm.graph.nodes)
    result, seconds = _timed(lambda: deduplicate(gm, tracker, fast=True))
    report, check_s = _timed(lambda: check_transformation(original, gm))
    return DedupRow(nodes, len(result.subgraphs), len(result.replaced), seconds, check_s,
                    report.ok)  # fmt: skip


def _timed(run: Callable[[], T]) -> tuple[T, float]:
    """`run()` and its CPU seconds, garbage collector off as timeit does (collections of the
    fake tensors' heap are not our cost)."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        found = run()
        return found, time.process_time() - start
    finally:
        gc.enable()


def exponent(rows: Sequence[DedupRow]) -> float:
    first, last = rows[0], rows[-1]
    return math.log(last.seconds / first.seconds) / math.log(last.nodes / first.nodes)


def run(sizes: Sequence[int]) -> str:
    """Deduplicate one graph per size; the table and the scaling verdict as text."""
    rows = [measure(n) for n in sizes]
    lines = [f"{'nodes':>8} {'groups':>7} {'calls':>6} {'dedup s':>9} {'check s':>9}  ok"]
    lines += [f"{r.nodes:>8} {r.groups:>7} {r.calls:>6} {r.seconds:>9.3f} {r.check_s:>9.3f}"
              f"  {'yes' if r.ok else 'NO'}" for r in rows]  # fmt: skip
    if len(rows) > 1:
        e = exponent(rows)
        verdict = "PASS" if e <= EXPONENT_MAX else "FAIL"
        lines.append(
            f"{verdict}  dedup scaling exponent {rows[0].nodes}->{rows[-1].nodes}: {e:.2f}"
        )
    near = min(rows, key=lambda r: abs(r.nodes - CHECK_AT))
    verdict = "PASS" if near.check_s <= CHECK_S_MAX and near.ok else "FAIL"
    lines.append(f"{verdict}  check_transformation at {near.nodes} nodes <= {CHECK_S_MAX:g} s "
                 f"and ok: {near.check_s:.2f}")  # fmt: skip
    return "\n".join(lines) + "\n"
