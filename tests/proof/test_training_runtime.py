"""CHK-17 includes torch's training runtime (spec chapter 06): a transformed module whose inputs
or parameters require grad is compiled through AOTAutograd, forward and backward, and a
rejection names the obligation it breaks."""

from __future__ import annotations

import pytest

from checker.proof.check import check_transformation
from checker.proof.report import RUNTIME
from checker.proof.verdict import Unknown
from reference.graph_copy import copy_graph_module
from tests.support.corpus import CORPUS_DIR, capture_with_torch, torch_dedup_graph


@pytest.mark.spec("CHK-17")
def test_chk17_torchs_batchnorm_subgraph_is_rejected_by_training_naming_rpl7() -> None:
    """torch's pass outlines the BatchNorm blocks in train mode (N14): the eager runtime runs
    them, AOTAutograd rejects the subgraph's buffer write; CHK-17 names RPL-7."""
    path = CORPUS_DIR / "own_batchnorm_train.py"
    found = capture_with_torch(path)
    original = copy_graph_module(found.gm).gm
    report = check_transformation(original, torch_dedup_graph(path), found.example_inputs)
    verdict = report.verdict_of(RUNTIME)
    assert isinstance(verdict, Unknown), verdict
    assert "training runtime (AOTAutograd) rejects a subgraph writes an operand (RPL-7" in (
        verdict.reason
    )
    assert "in-place input or buffer mutations" in verdict.reason


@pytest.mark.spec("CHK-17")
def test_chk17_the_references_groupnorm_blocks_train() -> None:
    """GroupNorm blocks (no running statistics) are outlined by the reference; their training
    compile runs forward and backward: CHK-17 holds."""
    from reference.dynamo.capture import capture
    from reference.pipeline import deduplicate
    from tests.support.corpus import load_model_file

    model = load_model_file(CORPUS_DIR / "own_groupnorm.py")
    found = capture(model.model, model.example_inputs)
    original = copy_graph_module(found.gm).gm
    assert deduplicate(found.gm, found.tracker).subgraphs
    report = check_transformation(original, found.gm, found.example_inputs)
    assert report.ok, report
