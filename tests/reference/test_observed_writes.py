"""Writes seen whatever bumps or not (spec chapter 09, EFF-9): a node's writes come from what it
does, run on fakes, or from the reviewed tables, with "unknown" where neither tells; the
reference refuses such regions (RPL-7) and the checker sees such writes (CHK-15)."""

from __future__ import annotations

import pytest
import torch
import torch.fx
import torch.nn.functional as F

from checker.proof.verdict import Violated
from checker.proof.wellformed import check_wellformed
from reference.dynamo.capture import capture
from reference.effects.node_effects import UNKNOWN_META, WRITES_META, declared_writes, writes
from reference.effects.observed_writes import node_writes, observed_writes
from reference.pipeline import deduplicate
from tests.support.corpus import CORPUS_DIR, load_model_file, torch_dedup_graph

Node = torch.fx.Node


def _nodes(gm: torch.fx.GraphModule, prefix: str) -> list[Node]:
    return [n for n in gm.graph.nodes if n.name.startswith(prefix)]


@pytest.mark.spec("EFF-9")
@pytest.mark.parametrize("training", [True, False])
def test_eff9_batch_norm_writes_its_running_stats_only_in_train_mode(training: bool) -> None:
    """No version counter moves (the record of counters alone is empty), yet running the node
    on fakes shows `native_batch_norm` writing `running_mean` and `running_var` (flat positions
    1 and 2 of `F.batch_norm(x, mean, var, ...)`), in train mode only."""
    norm = torch.nn.BatchNorm1d(3).train(training)
    found = capture(lambda x: norm(x) * 2, (torch.randn(4, 3),))
    (node,) = _nodes(found.gm, "batch_norm")
    assert node.target is F.batch_norm
    assert observed_writes(node) == ((1, 2) if training else ())
    assert writes(node) == ((1, 2) if training else ())
    fed = found.tracker.node_to_mutated_arg_positions.get(node, ())
    assert set(fed) == ({1, 2} if training else set())  # the pass reads them too


@pytest.mark.spec("EFF-9")
def test_eff9_the_tables_tell_where_a_node_cannot_run() -> None:
    """A hand-built graph without example values: `F.batch_norm(training=True)` and
    `F.embedding(max_norm=...)` are declared writers by the reviewed Python-level table, the
    aten op `native_batch_norm` by the table of undeclared aten writes; such a node cannot be
    run on fakes, so capture would record what the table says and no more."""
    g = torch.fx.Graph()
    x, mean, var, w, ids = (g.placeholder(n) for n in ("x", "mean", "var", "w", "ids"))
    train = g.call_function(F.batch_norm, (x, mean, var), {"training": True})
    infer = g.call_function(F.batch_norm, (x, mean, var, None, None, False))
    renorm = g.call_function(F.embedding, (ids, w), {"max_norm": 1.0})
    plain = g.call_function(F.embedding, (ids, w))
    aten = g.call_function(torch.ops.aten.native_batch_norm.default,
                           (x, None, None, mean, var, True, 0.1, 1e-5))  # fmt: skip
    assert declared_writes(train) == (1, 2) and declared_writes(infer) == ()
    assert declared_writes(renorm) == (1,) and declared_writes(plain) == ()
    assert declared_writes(aten) == (1, 2)  # flat positions: `None`s are no node arguments
    assert observed_writes(train) is None
    assert node_writes(train, ()) == ((1, 2), False)


@pytest.mark.spec("EFF-9")
def test_eff9_a_node_nothing_tells_is_unknown_and_keeps_its_counters() -> None:
    """A higher-order op cannot be run node by node and is in no table: its writes are unknown
    and only the version counters count."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    hop = g.call_function(torch.ops.higher_order.invoke_subgraph, (x, "body", x))
    assert observed_writes(hop) is None
    assert node_writes(hop, (1,)) == ((1,), True)


@pytest.mark.spec("EFF-9")
def test_eff9_capture_marks_unknown_nodes() -> None:
    """On a captured graph every call node runs on fakes, so none is unknown but the nodes no
    run can replay (here: none)."""
    found = capture(lambda x: (x * 2).sin_() + 1, (torch.randn(3),))
    assert not any(UNKNOWN_META in n.meta for n in found.gm.graph.nodes)
    (sin,) = _nodes(found.gm, "sin_")
    assert sin.meta[WRITES_META] == (0,)


_WRITING = ("own_batchnorm_train", "own_batchnorm2d_resnet", "own_instancenorm_running_stats",
            "own_embedding_max_norm")  # fmt: skip


@pytest.mark.spec("EFF-9", "RPL-7")
@pytest.mark.parametrize("stem", _WRITING)
def test_rpl7_writes_no_counter_sees_refuse_every_region(stem: str) -> None:
    """The reference refuses every region of these models by RPL-7 (running statistics, a
    renormalised embedding weight): nothing is outlined."""
    model = load_model_file(CORPUS_DIR / f"{stem}.py")
    found = capture(model.model, model.example_inputs)
    result = deduplicate(found.gm, found.tracker)
    assert result.refused and all(r.id == "RPL-7" for r in result.refused)
    assert not result.subgraphs and not result.replaced


@pytest.mark.spec("EFF-9", "CHK-15")
def test_chk15_sees_the_running_stats_write_in_torchs_subgraph() -> None:
    """torch's pass, reading version counters only, outlines the BatchNorm blocks (N14); the
    checker's CHK-15 names the subgraph's write of its running-mean input."""
    gm = torch_dedup_graph(CORPUS_DIR / "own_batchnorm_train.py")
    verdict = check_wellformed(gm)
    assert isinstance(verdict, Violated)
    assert "CHK-15: batch_norm_1 mutates the subgraph's input" in verdict.witness
    assert "running_mean" in verdict.witness


@pytest.mark.spec("EFF-9", "RPL-7")
def test_eff9_the_drop_in_pass_sees_the_running_stats_write() -> None:
    """Installed as torch's pass (`use_reference`), the reference runs the nodes too: the
    BatchNorm blocks in train mode reach the backend without a call."""
    from reference.dynamo.drop_in import use_reference

    model = load_model_file(CORPUS_DIR / "own_batchnorm_train.py")
    calls: list[int] = []

    def backend(gm: torch.fx.GraphModule, inputs: object) -> object:
        calls.append(
            sum(n.target is torch.ops.higher_order.invoke_subgraph for n in gm.graph.nodes)
        )
        return gm.forward

    torch._dynamo.reset()
    try:
        with use_reference():
            torch.compile(model.model, backend=backend, fullgraph=True)(*model.example_inputs)
    finally:
        torch._dynamo.reset()
    assert calls == [0]
