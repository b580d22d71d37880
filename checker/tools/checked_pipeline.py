"""The verify pipeline: key, expand, prove and replace through the gate, check, split (README).

`run_pipeline(gm, tracker)` finds the region groups once, deduplicates `gm` in place with the
checker's gate (RPL-11: the replacer never replaces a group the gate did not prove), then checks
the result against a copy of the original with `check_transformation`, on the captured example
inputs when there are some. With a split policy it also splits the deduplicated module with
`reference.split_module` and checks that too.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import torch
import torch.fx

from checker.proof.check import check_transformation
from checker.proof.gate import make_gate
from checker.proof.report import Report
from reference.errors import FxOracleError
from reference.expand.regions import RegionSearch, search_regions
from reference.graph_copy import copy_graph_module
from reference.names import INVOKE
from reference.pipeline import deduplicate
from reference.replace.outliner import DedupResult
from reference.split import split_module
from reference.track.keys import NodeKey
from reference.track.tracker import GraphRegionTracker

Node = torch.fx.Node


class SplitPolicy(StrEnum):
    PER_REGION = "per-region"  # a new partition at every outlined call
    EVERY = "every"  # `every-N`: N nodes per partition


@dataclass(frozen=True, slots=True)
class Split:
    """A split policy: `per-region`, or `every-N` with its N."""

    policy: SplitPolicy
    size: int = 0

    def __str__(self) -> str:
        return str(self.policy) if self.policy is SplitPolicy.PER_REGION else f"every-{self.size}"

    @staticmethod
    def parse(text: str) -> Split:
        """`per-region` or `every-N` (N >= 1, ASCII digits: `²` is a digit to `isdigit`, not
        to `int`); `FxOracleError` otherwise (FIL-5)."""
        if text == SplitPolicy.PER_REGION:
            return Split(SplitPolicy.PER_REGION)
        size = text.removeprefix("every-")
        if text.startswith("every-") and size.isascii() and size.isdigit() and int(size) > 0:
            return Split(SplitPolicy.EVERY, int(size))
        raise FxOracleError(f"--split {text}: expected 'per-region' or 'every-N' with N >= 1")


@dataclass(frozen=True, slots=True, eq=False)
class SplitOutcome:
    """The split of the deduplicated module and its check."""

    policy: Split
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
    transformed: torch.fx.GraphModule  # `gm` after the replacement (the same object)
    keys: Mapping[Node, NodeKey]  # the tracker's keys, for what differs at a refused step


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
    example_inputs: tuple[Any, ...] | None = None,
    split: Split | None = None,
    progress: Callable[[str], None] = lambda step: None,
) -> PipelineResult:
    """Expand (once), prove and replace (in place on `gm`), check, and split when asked."""
    timings: dict[str, float] = {}
    with _timed(timings, "expand", progress):
        search = search_regions(gm.graph, tracker.buckets(), fast=True)  # large models too
    original = copy_graph_module(gm).gm
    with _timed(timings, "dedup", progress):
        result = gated_deduplicate(gm, tracker, search)
    with _timed(timings, "check", progress):
        report = check_transformation(original, gm, example_inputs, extra_deps=result.extra_deps)
    outcome = None
    if split is not None:
        with _timed(timings, "split", progress):
            outcome = _split(original, gm, split, example_inputs)
    return PipelineResult(search, original, result, report, outcome, timings, gm,
                          tracker.node_to_key)  # fmt: skip


def gated_deduplicate(
    gm: torch.fx.GraphModule, tracker: GraphRegionTracker, search: RegionSearch | None = None
) -> DedupResult:
    """`reference.deduplicate` with the checker's gate: no group is replaced unless the gate
    proved its shapes (RPL-11, CHK-12). fxoracle's own tools always deduplicate this way."""
    return deduplicate(gm, tracker, gate=make_gate(gm), search=search)


def split_callback(split: Split, gm: torch.fx.GraphModule) -> Callable[[Node], int]:
    """`per-region`: a new partition at every outlined call; `every-N`: N nodes per partition."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    if split.policy is SplitPolicy.PER_REGION:
        starts = sorted(order[n] for n in gm.graph.nodes if n.target is INVOKE)
        return lambda node: bisect.bisect_right(starts, order[node])
    return lambda node: order[node] // split.size


def _split(
    original: torch.fx.GraphModule,
    gm: torch.fx.GraphModule,
    split: Split,
    example_inputs: tuple[Any, ...] | None,
) -> SplitOutcome:
    parts = split_module(gm, None, split_callback(split, gm))
    names = tuple(n for n, _ in parts.named_children() if n.startswith("submod_"))
    return SplitOutcome(split, names, check_transformation(original, parts, example_inputs))
