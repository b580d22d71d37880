"""`make bench`, part two: deduplication time against graph size (spec chapter 03, RPL-10).

Graphs of `n` segments of 4 residual MLP blocks each (`checker.bench.blocks.repeated_segments`): one
region group per segment, so the number of groups grows with the graph. Each size is keyed,
expanded and outlined by `reference.deduplicate`; the table gives CPU seconds per phase and the
scaling exponent of the whole from the smallest to the largest size (a measurement: `fxoracle
bench` exits 0 whatever it says).
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from checker.bench.blocks import nodes_per_block, repeated_segments
from reference.dedup import deduplicate
from reference.tracker import GraphRegionTracker

PER_SEGMENT = 4
EXPONENT_MAX = 1.2


@dataclass(frozen=True, slots=True)
class DedupRow:
    nodes: int
    groups: int
    calls: int
    seconds: float


def measure(n_nodes: int) -> DedupRow:
    """Build, key and deduplicate one graph of about `n_nodes` nodes; time the dedup call."""
    n_segments = max(1, round(n_nodes / (PER_SEGMENT * nodes_per_block("mlp"))))
    bg = repeated_segments(n_segments, PER_SEGMENT)
    tracker = GraphRegionTracker()
    for node, tx in bg.sites:
        tracker.track_node(tx, node)
    gm = torch.fx.GraphModule(torch.nn.Module(), bg.graph)
    nodes = len(gm.graph.nodes)
    gc.collect()
    gc.disable()  # as timeit does: collections of the fake tensors' heap are not our cost
    try:
        start = time.process_time()
        result = deduplicate(gm, tracker)
        seconds = time.process_time() - start
    finally:
        gc.enable()
    return DedupRow(nodes, len(result.subgraphs), len(result.replaced), seconds)


def exponent(rows: Sequence[DedupRow]) -> float:
    first, last = rows[0], rows[-1]
    return math.log(last.seconds / first.seconds) / math.log(last.nodes / first.nodes)


def run(sizes: Sequence[int]) -> str:
    """Deduplicate one graph per size; the table and the scaling verdict as text."""
    rows = [measure(n) for n in sizes]
    lines = [f"{'nodes':>8} {'groups':>7} {'calls':>6} {'dedup s':>9}"]
    lines += [f"{r.nodes:>8} {r.groups:>7} {r.calls:>6} {r.seconds:>9.3f}" for r in rows]
    if len(rows) > 1:
        e = exponent(rows)
        verdict = "PASS" if e <= EXPONENT_MAX else "FAIL"
        lines.append(
            f"{verdict}  dedup scaling exponent {rows[0].nodes}->{rows[-1].nodes}: {e:.2f}"
        )
    return "\n".join(lines) + "\n"
