"""torch 2.13's deduplication pass, observed inside its own capture (spec chapter 08, DIF-2).

`torch_dedup(path)` compiles the model file with `use_graph_deduplication` on and wraps Dynamo's
call of `apply_graph_deduplication`: the graph is copied right before the pass, the region
groups are those the pass asked its tracker for, and the graph is copied right after it, so
nothing Dynamo does later hides a bug. When torch raises, `TorchCrash` carries the region
groups its pass had found, if it got that far. This module touches torch objects, so `Any`
appears where they cross its edge.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast
from unittest import mock

import torch
import torch.fx

from checker.impls import (
    DedupOutput,
    Node,
    RegionGroups,
    bucket_names,
    first_line,
    region_names,
)
from reference.errors import FxOracleError


class TorchCrash(Exception):
    """torch raised while capturing or deduplicating; `groups` are the region groups its pass
    had found, if it got that far."""

    def __init__(self, message: str, groups: RegionGroups | None = None) -> None:
        super().__init__(message)
        self.groups = groups


def torch_dedup(path: Path) -> DedupOutput:
    """Capture `path` with torch's dedup on and observe `apply_graph_deduplication`: the graph
    before (copied), the region groups it asked for, the graph right after (copied)."""
    from reference.capture import load_model_file

    mf = load_model_file(path)
    seen: list[DedupOutput] = []
    asked: list[RegionGroups] = []
    flags = {"use_graph_deduplication": True, "inline_single_use_invoke_subgraph": False}
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(flags), _observed(seen, asked):
            compiled = torch.compile(mf.model, backend="eager", fullgraph=True, dynamic=mf.dynamic)
            compiled(*mf.example_inputs)
    except Exception as e:  # torch crashed on this model: the diff reports it
        raise TorchCrash(f"{type(e).__name__}: {first_line(e)}", *asked[:1]) from e
    finally:
        torch._dynamo.reset()
    if len(seen) != 1:
        raise FxOracleError(f"{path}: torch produced {len(seen)} graphs, expected exactly one")
    return seen[0]


@contextmanager
def _observed(sink: list[DedupOutput], asked: list[RegionGroups]) -> Iterator[None]:
    import torch._dynamo.output_graph as output_graph

    from checker.graph_copy import copy_graph_module
    from reference.capture import snapshot

    original = getattr(output_graph, "apply_graph_deduplication")  # noqa: B009

    def observe(out: Any) -> dict[str, torch.fx.GraphModule]:
        before = copy_graph_module(torch.fx.GraphModule(dict(out.nn_modules), out.graph)).gm
        inputs = tuple(snapshot(arg.example) for arg in out.graphargs)
        tracker = out.region_tracker
        buckets = bucket_names(tracker.hash_to_duplicates.values())
        find = tracker.get_identical_regions

        def spy(graph: torch.fx.Graph) -> list[list[list[Node]]]:
            found = cast(list[list[list[Node]]], find(graph))
            asked.append(region_names(found))
            return found

        with mock.patch.object(tracker, "get_identical_regions", spy):
            result = cast(dict[str, torch.fx.GraphModule], original(out))
        after = copy_graph_module(torch.fx.GraphModule(dict(out.nn_modules), out.graph)).gm
        sink.append(DedupOutput(before, after, inputs, asked[0] if asked else (), None, buckets))
        return result

    with mock.patch.object(output_graph, "apply_graph_deduplication", observe):
        yield
