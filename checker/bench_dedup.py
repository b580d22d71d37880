"""`make bench`, part two: deduplication time against graph size (spec chapter 03, RPL-10).

Graphs of `n` segments of 4 residual MLP blocks each (`checker.blocks.repeated_segments`): one
region group per segment, so the number of groups grows with the graph. Each size is keyed,
expanded and outlined by `reference.deduplicate`; the table gives CPU seconds per phase and the
scaling exponent of the whole from the smallest to the largest size. Exit 0 (a measurement),
2 on bad flags.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from checker.blocks import nodes_per_block, repeated_segments
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.bench_dedup", description=__doc__)
    parser.add_argument("--sizes", default="2000,8000,33000", help="approximate node counts")
    try:
        args = parser.parse_args(argv)
        sizes = [int(s) for s in args.sizes.split(",")]
    except (SystemExit, ValueError):
        return 2
    rows = [measure(n) for n in sizes]
    print(f"{'nodes':>8} {'groups':>7} {'calls':>6} {'dedup s':>9}")
    for row in rows:
        print(f"{row.nodes:>8} {row.groups:>7} {row.calls:>6} {row.seconds:>9.3f}")
    if len(rows) > 1:
        e = exponent(rows)
        verdict = "PASS" if e <= EXPONENT_MAX else "FAIL"
        print(f"{verdict}  dedup scaling exponent {rows[0].nodes}->{rows[-1].nodes}: {e:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
