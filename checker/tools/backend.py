"""`verify_backend()`: a `torch.compile` backend that checks fxoracle's deduplication on every
graph Dynamo captures, and runs the user's graph untouched (spec chapter 06, CHK; the keys are
chapter 01's offline mode, TRK-10).

For each graph: copy it, key the copy with `track_graph_fast`, find its regions once,
deduplicate the copy in place (behind the checker's gate), check the copy against the original
with `check_transformation` on the graph's example inputs, log one paragraph, and hand Dynamo the
ORIGINAL graph's `forward`: whatever the check finds, the user's program computes what it
computed without fxoracle.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from checker.io.reports import plural
from checker.proof.check import check_transformation
from checker.tools.checked_pipeline import gated_deduplicate
from reference.errors import FxOracleError, describe
from reference.expand.regions import search_regions
from reference.fast.keys import track_graph_fast
from reference.graph_copy import copy_graph_module
from reference.replace.outliner import DedupResult
from reference.track.tracker import GraphRegionTracker

LOGGER = "fxoracle"
Transform = Callable[[torch.fx.GraphModule, GraphRegionTracker], DedupResult]
Backend = Callable[[torch.fx.GraphModule, list[torch.Tensor]], Callable[..., Any]]
FAILED = ("violated", "error")  # statuses `raise_on_failure` raises on; "unknown" only logs
SHOWN = 4  # regions listed per group in the paragraph


@dataclass(frozen=True, slots=True)
class GraphCheck:
    """What the backend found for one captured graph.

    `status` is `holds`, `violated`, `unknown` (some obligation could not be decided) or
    `error` (the deduplication itself raised); `detail` says which check and why.
    """

    index: int
    nodes: int
    groups: tuple[tuple[tuple[str, ...], ...], ...]
    replaced: int
    refused: int
    subgraphs: int
    status: str
    detail: str

    @property
    def failed(self) -> bool:
        return self.status in FAILED

    def paragraph(self) -> str:
        """The one-paragraph report: the graph, its groups by node names, what was outlined,
        and the verdict."""
        text = f"fxoracle: graph {self.index}: {_count(self.nodes, 'node')}, "
        text += _count(len(self.groups), "region group")
        for g, group in enumerate(self.groups):
            regions = ", ".join(_span(r) for r in group[:SHOWN])
            more = f", ... ({len(group) - SHOWN} more)" if len(group) > SHOWN else ""
            size = f"{_count(len(group), 'region')} x {_count(len(group[0]), 'node')}"
            text += f"; group {g}: {size} [{regions}{more}]"
        text += f"; {_count(self.replaced, 'region')} outlined into "
        text += f"{_count(self.subgraphs, 'subgraph')}, {self.refused} refused; check {self.status}"
        return text + (f": {self.detail}" if self.detail else "") + "."


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _span(region: Sequence[str]) -> str:
    return region[0] if len(region) == 1 else f"{region[0]}..{region[-1]}"


def verify_backend(
    *,
    raise_on_failure: bool = False,
    log: Callable[[str], None] | None = None,
    transform: Transform | None = None,
) -> Backend:
    """A `torch.compile` backend that checks `transform` (default: `reference.deduplicate`
    behind the checker's gate, `gated_deduplicate`) on a copy of every captured graph and
    returns the original graph's `forward`.

    Each graph's paragraph goes to `log`, by default the `fxoracle` logger (info when the check
    holds, warning otherwise). `raise_on_failure=True` raises `FxOracleError` when a check is
    violated or the transformation raised (Dynamo wraps it in `BackendCompilerFailed`); an
    unknown verdict is logged, never raised and never called a pass.
    """
    counter = itertools.count()

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Any:
        found = verify_graph(gm, example_inputs, next(counter), transform)
        _write(found, log)
        if raise_on_failure and found.failed:
            raise FxOracleError(found.paragraph())
        return gm.forward

    return backend


def _write(found: GraphCheck, log: Callable[[str], None] | None) -> None:
    if log is not None:
        log(found.paragraph())
        return
    logger = logging.getLogger(LOGGER)
    level = logging.INFO if found.status == "holds" else logging.WARNING
    logger.log(level, "%s", found.paragraph())


def verify_graph(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    index: int,
    transform: Transform | None = None,
) -> GraphCheck:
    """Deduplicate a copy of `gm` with `transform` (default: `gated_deduplicate`) and check it
    against `gm`; `gm` is left as it was."""
    copy = copy_graph_module(gm).gm
    tracker = track_graph_fast(copy.graph)
    search = search_regions(copy.graph, tracker.buckets(), fast=True)  # real models
    groups = search.group_names()
    nodes = len(gm.graph.nodes)
    try:
        if transform is None:
            result = gated_deduplicate(copy, tracker, search)
        else:
            result = transform(copy, tracker)
    except Exception as e:  # a crash of the transformation is a finding, never the user's crash
        return GraphCheck(index, nodes, groups, 0, 0, 0, "error", describe(e))
    status, detail = _check(gm, copy, example_inputs, result)
    replaced, refused = len(result.replaced), len(result.refused)
    return GraphCheck(
        index, nodes, groups, replaced, refused, len(result.subgraphs), status, detail
    )


def _check(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    result: DedupResult,
) -> tuple[str, str]:
    """(status, detail) from the checker on the graph's example inputs."""
    report = check_transformation(
        original, transformed, list(example_inputs), extra_deps=result.extra_deps
    )
    if report.violations:
        return "violated", "; ".join(o.line() for o in report.violations)
    if report.unknowns:
        return "unknown", "; ".join(o.line() for o in report.unknowns)
    return "holds", plural(len(report.obligations), "obligation")
