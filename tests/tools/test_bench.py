"""Tests of the bench graph generator and of `python -m checker.bench.regions` (spec chapter 02).

No timing assertions: the numbers belong to `make bench`, these tests check what it runs on and
what it writes.
"""

from __future__ import annotations

import json
import math
import operator
from pathlib import Path

import pytest
from torch._dynamo.graph_region_tracker import GraphRegionTracker as TorchTracker
from torch._subclasses.fake_tensor import FakeTensor

from checker.bench.blocks import (
    MLP_OPS,
    TRANSFORMER_OPS,
    BlockGraph,
    blocks_for,
    expected_nodes,
    feed,
    nodes_per_block,
    repeated_blocks,
)
from checker.bench.regions import Measure, Row, Target, exponent, targets
from checker.cli import main
from reference.errors import FxOracleError
from reference.track.offline import track_graph
from reference.track.tracker import GraphRegionTracker

Names = list[list[list[str]]]


def _ours(bg: BlockGraph) -> Names:
    """The reference's regions, keyed live; offline keying (what the bench times) finds the
    same ones from the nodes' stack traces (TRK-10, TRK-13)."""
    tracker = GraphRegionTracker()
    feed(tracker, bg)
    assert tracker.untracked == {}
    live = [[[n.name for n in r] for r in g] for g in tracker.get_identical_regions(bg.graph)]
    offline = track_graph(bg.graph).get_identical_regions(bg.graph)
    assert [[[n.name for n in r] for r in g] for g in offline] == live
    return live


def _torch(bg: BlockGraph) -> Names:
    tracker = TorchTracker()
    feed(tracker, bg)
    return [[[n.name for n in r] for r in g] for g in tracker.get_identical_regions(bg.graph)]


@pytest.mark.parametrize(("kind", "per_block"), [("transformer", 34), ("mlp", 9)])
def test_generator_node_count(kind: str, per_block: int) -> None:
    bg = repeated_blocks(6, kind)
    assert nodes_per_block(kind) == per_block
    assert bg.n_nodes == expected_nodes(6, kind) == 6 * per_block + 2
    assert [n for n, _ in bg.sites] == list(bg.graph.nodes)[:-1]  # all but the output
    bg.graph.lint()


def test_generator_sizes() -> None:
    """The default bench sizes land within one block of ~2k, ~8k and ~33k nodes."""
    for size in (2000, 8000, 33000):
        assert abs(expected_nodes(blocks_for(size)) - size) <= nodes_per_block("transformer")
    assert blocks_for(10) == 2


def test_generator_example_values_and_sites() -> None:
    """Each op's fake value is what the op computes; an op's call site is the same per block."""
    bg = repeated_blocks(3)
    ops = [n for n in bg.graph.nodes if n.op in ("call_function", "call_method")]
    assert len(ops) == 3 * TRANSFORMER_OPS
    out = ops[-1].meta["example_value"]
    assert isinstance(out, FakeTensor)
    assert (tuple(out.shape), out.requires_grad) == ((2, 8, 32), True)
    chunk = next(n for n in ops if n.target == "chunk")
    assert [tuple(t.shape) for t in chunk.meta["example_value"]] == [(2, 8, 32)] * 3
    sites = dict(bg.sites)
    lines = [[sites[n].lineno for n in ops[b::TRANSFORMER_OPS]] for b in range(TRANSFORMER_OPS)]
    assert all(len(set(per_op)) == 1 for per_op in lines)
    assert len({line[0] for line in lines}) == TRANSFORMER_OPS


@pytest.mark.spec("EXP-13")
@pytest.mark.torch_diff
@pytest.mark.parametrize(("kind", "ops"), [("transformer", TRANSFORMER_OPS), ("mlp", MLP_OPS)])
def test_exp13_block_regions_equal_torch(kind: str, ops: int) -> None:
    """EXP-13: identical blocks give one group, a region per block, as torch finds."""
    bg = repeated_blocks(6, kind)
    ours = _ours(bg)
    assert ours == _torch(bg)
    assert [len(g) for g in ours] == [6] and [len(r) for r in ours[0]] == [ops] * 6
    first_block = [n.name for n in bg.graph.nodes if n.op != "placeholder"][:ops]
    assert ours[0][0] == first_block


@pytest.mark.spec("EXP-13")
@pytest.mark.torch_diff
def test_exp13_input_without_grad_equal_torch() -> None:
    """EXP-13: block 0 keyed apart (input without grad): regions straddle blocks, as in torch."""
    bg = repeated_blocks(6, input_requires_grad=False)
    ours = _ours(bg)
    assert ours == _torch(bg)
    assert [len(g) for g in ours] == [5] and [len(r) for r in ours[0]] == [TRANSFORMER_OPS] * 5
    assert ours[0][0][:2] == ["layer_norm_1", "linear_2"]  # from block 0's second half


def test_generator_bad_arguments() -> None:
    with pytest.raises(FxOracleError, match="unknown block kind"):
        repeated_blocks(2, "cnn")
    with pytest.raises(FxOracleError, match="at least 1"):
        repeated_blocks(0)


def _row(nodes: int, seconds: float, torch_seconds: float | None = None) -> Row:
    ref = Measure(seconds, seconds, 1.0, ((("a", "b"), ("c", "d")),))
    theirs = (
        None if torch_seconds is None else Measure(torch_seconds, torch_seconds, 9.0, ref.groups)
    )
    return Row(nodes, nodes // 10, ref, theirs)


def test_exponent_and_targets() -> None:
    rows = [_row(1000, 0.01, 0.5), _row(4000, 0.04), _row(16000, 0.32)]
    assert exponent(rows) == pytest.approx(math.log(32) / math.log(16))
    assert exponent(rows[:1]) is None
    assert rows[0].ratio == pytest.approx(50.0) and rows[0].total_ratio == pytest.approx(50.0)
    assert rows[2].ref.total_s == pytest.approx(0.64)
    assert [t.verdict for t in targets(rows)] == ["PASS", "FAIL", "FAIL", "PASS"]
    assert (rows[0].same, rows[1].ratio, rows[1].same) == (True, None, None)
    assert Target("s", 50.0, 10.0, at_least=True).verdict == "PASS"
    assert Target("e", 1.25, 1.2, at_least=False).verdict == "FAIL"
    assert Target("p", None, 500.0, at_least=False).verdict == "N/A"


def test_bench_json_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "--sizes", "300", "--repeat", "1", "--json", str(out),
                 "--campaign-models", "0", "--detect-models", "0"]) == 0  # fmt: skip
    data = json.loads(out.read_text())
    assert set(data) == {"$fxoracle", "kind", "repeat", "exponent", "rows", "targets", "floor"}
    assert data["$fxoracle"] == "bench"  # FIL-18
    limit = data["floor"]
    assert limit["nodes"] == 308 and 0 < limit["pass_s"] < limit["reads_s"]
    assert (data["kind"], data["repeat"], data["exponent"]) == ("transformer", 1, None)
    [row] = data["rows"]
    assert set(row) == {
        "nodes",
        "blocks",
        "ref_key_seconds",
        "ref_seconds",
        "ref_peak_mb",
        "torch_key_seconds",
        "torch_seconds",
        "torch_peak_mb",
        "ratio",
        "total_ratio",
        "groups",
        "regions",
        "same_groups",
    }
    assert (row["nodes"], row["blocks"], row["groups"], row["regions"]) == (308, 9, 1, 9)
    assert row["same_groups"] is True and row["torch_seconds"] is not None
    assert [t["verdict"] for t in data["targets"]][2] == "N/A"  # one size: no exponent
    assert set(data["targets"][0]) == {"name", "value", "bound", "at_least", "verdict"}
    printed = capsys.readouterr().out
    assert "torch/ref" in printed and "region finding (key + find) speedup over torch" in printed
    assert "dedup scaling" not in printed and "dedup s" in printed  # one size: no exponent
    assert "one pass over 308 nodes" in printed and "x the reads" in printed


@pytest.mark.parametrize("flags", [["--repeat", "0"], ["--sizes", "x"], ["--kind", "cnn"]])
def test_bench_bad_flags_exit_2(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", *flags]) == 2
    assert capsys.readouterr().err.startswith("fxoracle: error: ")


def test_feed_tracks_every_node_once() -> None:
    """Feeding twice is a no-op the second time (re-tracking, as in torch)."""
    bg = repeated_blocks(2, "mlp")
    tracker = GraphRegionTracker()
    feed(tracker, bg)
    feed(tracker, bg)
    assert len(tracker.node_to_key) == bg.n_nodes - 1
    adds = [n for n in bg.graph.nodes if n.target is operator.add]
    assert tracker.node_to_duplicates[adds[0]] == adds
