"""Tests of `make bench`'s plain-against-fast table (`checker.bench.paths`, issue 33): an entry
point with a `fast` switch is called both ways, one without it once. No timing assertions."""

from __future__ import annotations

import pytest
import torch

from checker.bench import paths
from checker.bench.blocks import repeated_blocks
from reference.track.offline import track_graph
from reference.track.tracker import GraphRegionTracker


def test_switch_read_from_the_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bool] = []

    def switched(graph: torch.fx.Graph, *, fast: bool = False) -> GraphRegionTracker:
        asked.append(fast)
        return track_graph(graph)

    monkeypatch.setattr(paths, "track_graph", switched)
    rows = paths.measure(repeated_blocks(2), repeat=1)
    assert rows[0].name == "track_graph" and len(rows) == 4
    assert rows[0].fast_s is not None and {False, True} <= set(asked)
    for row, (_, has_fast, _) in zip(rows, paths.entry_points(repeated_blocks(2)), strict=True):
        assert (row.fast_s is not None) == has_fast and row.plain_s > 0
    assert paths.takes_fast(switched) and not paths.takes_fast(len)


def test_table_lists_every_entry_point() -> None:
    text = paths.run([70], 1, "mlp", 10_000)
    for name in ("track_graph", "stable_topological_sort", "cycle refusal"):
        assert name in text
    assert paths.run([70], 1, "mlp", 10).count("\n") == 2  # above the cap: the heading only
