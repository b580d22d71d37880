"""The verify pipeline: key, expand, prove, replace, check, and optionally split (README).

`run_pipeline(gm, tracker)` deduplicates `gm` in place with the checker's gate (RPL-11: the
replacer never replaces a group the gate did not prove), then checks the result against a copy
of the original with `check_transformation`. With a split policy it also splits the
deduplicated module with `reference.split_module` and checks that too.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.fx

from checker.check import check_transformation
from checker.gate import make_gate
from checker.graph_copy import copy_graph_module
from checker.report import Report
from reference.dedup import DedupResult, deduplicate, ordering_deps
from reference.errors import FxOracleError
from reference.regions import RegionSearch, search_regions
from reference.split import split_module
from reference.tracker import GraphRegionTracker

Node = torch.fx.Node
INVOKE = torch.ops.higher_order.invoke_subgraph


@dataclass(frozen=True, slots=True, eq=False)
class SplitOutcome:
    """The split of the deduplicated module and its check."""

    policy: str
    partitions: tuple[str, ...]
    check: Report


@dataclass(frozen=True, slots=True, eq=False)
class PipelineResult:
    """Everything `fxoracle verify` reports about one graph."""

    search: RegionSearch
    original: torch.fx.GraphModule
    dedup: DedupResult
    check: Report
    split: SplitOutcome | None
    timings: dict[str, float]


@contextmanager
def _timed(timings: dict[str, float], step: str, progress: Callable[[str], None]) -> Iterator[None]:
    progress(step)
    start = time.perf_counter()
    yield
    timings[f"{step}_s"] = time.perf_counter() - start


def run_pipeline(
    gm: torch.fx.GraphModule,
    tracker: GraphRegionTracker,
    *,
    split: str | None = None,
    progress: Callable[[str], None] = lambda step: None,
) -> PipelineResult:
    """Expand, prove and replace (in place on `gm`), check, and split when asked."""
    timings: dict[str, float] = {}
    with _timed(timings, "expand", progress):
        search = search_regions(gm.graph, tracker)
    original = copy_graph_module(gm).gm
    with _timed(timings, "dedup", progress):
        result = gated_deduplicate(gm, tracker)
    with _timed(timings, "check", progress):
        report = check_transformation(original, gm, extra_deps=result.extra_deps)
    outcome = None
    if split is not None:
        with _timed(timings, "split", progress):
            outcome = _split(original, gm, split)
    return PipelineResult(search, original, result, report, outcome, timings)


def gated_deduplicate(gm: torch.fx.GraphModule, tracker: GraphRegionTracker) -> DedupResult:
    """`reference.deduplicate` with the checker's gate: no group is replaced unless the gate
    proved it (RPL-11, CHK-11, CHK-12). fxoracle's own tools always deduplicate this way."""
    deps = ordering_deps(gm.graph, tracker.node_to_mutated_arg_positions)
    return deduplicate(gm, tracker, gate=make_gate(gm, deps), deps=deps)


def split_policy(name: str, gm: torch.fx.GraphModule) -> Callable[[Node], int]:
    """`per-region`: a new partition at every outlined call; `every-N`: N nodes per partition."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    if name == "per-region":
        starts = sorted(order[n] for n in gm.graph.nodes if n.target is INVOKE)
        return lambda node: bisect.bisect_right(starts, order[node])
    if name.startswith("every-") and name.removeprefix("every-").isdigit():
        size = int(name.removeprefix("every-"))
        if size > 0:
            return lambda node: order[node] // size
    raise FxOracleError(f"--split {name}: expected 'per-region' or 'every-N' with N >= 1")


def _split(original: torch.fx.GraphModule, gm: torch.fx.GraphModule, policy: str) -> SplitOutcome:
    callback = split_policy(policy, gm)
    parts = split_module(gm, None, callback)
    names = tuple(n for n, _ in parts.named_children() if n.startswith("submod_"))
    return SplitOutcome(policy, names, check_transformation(original, parts))
