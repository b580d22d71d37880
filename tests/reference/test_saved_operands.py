"""RPL-28 (spec chapter 03) and CHK-22 (chapter 06): in training, torch's `invoke_subgraph`
saves every tensor operand of a call for backward, so a write of an operand after the region
makes backward fail; the reference refuses such a region, and the checker names such a call."""

from __future__ import annotations

import pytest
import torch

from checker.proof.check import check_transformation
from checker.proof.report import RUNTIME, WELL_FORMED
from checker.proof.training import compile_and_train
from checker.proof.verdict import Holds, Violated
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from reference.replace.legality import Refusal
from tests.support.corpus import CORPUS_DIR, capture_with_torch, load_model_file, torch_dedup_graph

MODEL = CORPUS_DIR / "own_saved_operand.py"


def _inputs(w_requires_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
    x, w = (t.detach().clone() for t in load_model_file(MODEL).example_inputs)
    return x, w.requires_grad_(w_requires_grad)


@pytest.mark.spec("RPL-28")
def test_rpl28_an_operand_written_after_a_training_region_is_refused() -> None:
    """Each block reads `x`, which `x.add_(1)` writes after it, while `w` requires grad: every
    region is refused, naming the write; the module trains as the original does."""
    found = capture(load_model_file(MODEL).model, _inputs(True))
    original = copy_graph_module(found.gm).gm
    result = deduplicate(found.gm, found.tracker)
    assert not result.replaced
    assert [r.reason for r in result.refused] == [Refusal.SAVED_OPERAND] * 3, result.refused
    assert [r.detail.split(" ")[0] for r in result.refused] == ["add_", "add__1", "add__2"]
    report = check_transformation(original, found.gm, list(_inputs(True)))
    assert report.ok, report


@pytest.mark.spec("RPL-28")
def test_rpl28_without_grad_the_regions_are_replaced() -> None:
    """No operand requires grad: the runtime saves nothing, so the same blocks are outlined and
    the result is proved."""
    found = capture(load_model_file(MODEL).model, _inputs(False))
    original = copy_graph_module(found.gm).gm
    result = deduplicate(found.gm, found.tracker)
    assert len(result.replaced) == 3 and not result.refused, result.refused
    assert check_transformation(original, found.gm, list(_inputs(False))).ok


@pytest.mark.spec("RPL-28")
def test_rpl28_a_no_grad_block_is_replaced() -> None:
    """Under `torch.no_grad()` the call does not record autograd, whatever requires grad."""
    model = load_model_file(MODEL).model

    def under_no_grad(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            out: torch.Tensor = model(x, w)
        return out

    found = capture(under_no_grad, _inputs(True))
    result = deduplicate(found.gm, found.tracker)
    assert len(result.replaced) == 3 and not result.refused, result.refused


@pytest.mark.spec("CHK-22", "CHK-17")
def test_chk22_torchs_call_whose_operand_is_written_later_is_violated() -> None:
    """torch's pass outlines the blocks (N16): CHK-1 names the later write (CHK-22), and the
    training compile fails on the transformed module alone, naming RPL-28."""
    found = capture_with_torch(MODEL)
    original = copy_graph_module(found.gm).gm
    transformed = torch_dedup_graph(MODEL)
    report = check_transformation(original, transformed, found.example_inputs)
    well_formed = report.verdict_of(WELL_FORMED)
    assert isinstance(well_formed, Violated), well_formed
    assert "CHK-22: add_ writes operand l_x_ after the call" in well_formed.witness
    assert "a later write of a saved operand (RPL-28, CHK-22)" in str(report.verdict_of(RUNTIME))
    assert isinstance(compile_and_train(original, list(found.example_inputs)), Holds)
    assert isinstance(compile_and_train(transformed, list(found.example_inputs)), Violated)
