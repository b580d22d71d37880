"""torch 2.13's `apply_graph_deduplication` output as it leaves the pass (chapter 03 tests).

Dynamo runs more passes after deduplication (unused get_attrs and getitems removed, extra HOP
outputs pruned, unused graph inputs dropped). The reference implements the pass itself, so the
differential tests compare against the graph right after `apply_graph_deduplication` returns:
this module observes it by wrapping torch's function for the duration of one capture.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import torch
import torch.fx

from tests.torch_side import DEDUP_FLAGS, capture, load_model_file
from tests.torch_side_summary import DedupSummary, summarize_dedup


@contextmanager
def _observed(sink: list[DedupSummary]) -> Iterator[None]:
    import torch._dynamo.output_graph as output_graph

    original = getattr(output_graph, "apply_graph_deduplication")  # noqa: B009

    def observe(out: Any) -> dict[str, torch.fx.GraphModule]:
        result: dict[str, torch.fx.GraphModule] = original(out)
        gm = torch.fx.GraphModule(dict(out.nn_modules), out.graph)
        sink.append(summarize_dedup(gm))
        return result

    with mock.patch.object(output_graph, "apply_graph_deduplication", observe):
        yield


def torch_raw_dedup(path: str | Path) -> DedupSummary:
    """Summary of the graph right after torch's pass, on the model file at `path`."""
    sink: list[DedupSummary] = []
    with _observed(sink):
        capture(load_model_file(path), DEDUP_FLAGS)
    assert len(sink) == 1, "RPL-1: one capture, one pass"
    return sink[0]
