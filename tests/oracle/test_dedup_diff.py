"""Differential and semantic tests of deduplication on the corpus (chapter 03)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from checker.proof.draws import seeded
from reference.dynamo.capture import capture, fresh_inputs
from reference.pipeline import deduplicate
from reference.policy import RIGHT, Policy
from reference.replace.outliner import DedupResult
from tests.support.corpus import corpus_files, load_model_file, torch_raw_dedup
from tests.support.dedup_summary import DedupSummary, summarize_dedup

UNPINNED = Policy(pin_grad_mode=False)  # torch's grad-mode rule (SRT-8)

pytestmark = pytest.mark.torch_diff
FILES = corpus_files()
GRAD = torch._C._set_grad_enabled


@dataclass(frozen=True)
class Outcome:
    """One file deduplicated by the reference: the summary, the result, and the numbers."""

    summary: DedupSummary
    result: DedupResult
    before: object
    after: object
    toggles_grad: bool


@functools.cache
def _outcome(path: Path, policy: Policy = RIGHT) -> Outcome:
    model_file = load_model_file(path)
    c = capture(model_file.model, model_file.example_inputs, model_file.dynamic)
    runnable = model_file.device == "cpu"
    before = _run(c.gm, c.example_inputs) if runnable else None
    toggles = any(n.target is GRAD for n in c.gm.graph.nodes)
    result = deduplicate(c.gm, c.tracker, policy=policy)
    after = _run(c.gm, c.example_inputs) if runnable else None
    return Outcome(summarize_dedup(c.gm), result, before, after, toggles)


def _run(gm: torch.fx.GraphModule, inputs: tuple[object, ...]) -> object:
    """Outputs, then the inputs as the run left them (in-place updates count), every generator
    seeded first (CHK-20: dropout draws alike)."""
    args = fresh_inputs(inputs)
    with seeded():
        return (gm(*args), args)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_rpl13_outputs_match_original(path: Path) -> None:
    """RPL-13: the deduplicated module computes what the captured one did, B1-B3/B13 too."""
    outcome = _outcome(path)
    if outcome.before is None:
        pytest.skip("fake CUDA inputs: captured, not runnable here")
    torch.testing.assert_close(outcome.after, outcome.before)


TORCH_RIGHT = [p for p in FILES if load_model_file(p).torch_wrong is None]


@pytest.mark.parametrize("path", TORCH_RIGHT, ids=[p.stem for p in TORCH_RIGHT])
def test_rpl14_graph_equals_torch(path: Path) -> None:
    """RPL-14: same subgraphs, invoke operands and node order as torch's pass (RPL-1, RPL-4)."""
    outcome = _outcome(path)
    theirs = _without_uncalled_subgraphs(torch_raw_dedup(path))
    assert outcome.summary.subgraphs == theirs.subgraphs
    if outcome.toggles_grad:  # SRT-8: our grad pins keep computation on its side
        assert outcome.summary.order != theirs.order
        outcome = _outcome(path, policy=UNPINNED)
    assert outcome.summary.invokes == theirs.invokes
    assert outcome.summary.order == theirs.order


def _without_uncalled_subgraphs(summary: DedupSummary) -> DedupSummary:
    """RPL-5: torch installs a subgraph for a group whose regions are all refused; we don't."""
    called = {call.subgraph for call in summary.invokes}
    return DedupSummary(
        tuple(s for s in summary.subgraphs if s.name in called),
        summary.invokes,
        tuple(n for n in summary.order if n.op != "get_attr" or n.target in called),
    )


def test_rpl14_torch_wrong_scenarios_differ() -> None:
    """Where torch is wrong (B3, B13) our graph differs from torch's and is right (RPL-13)."""
    for stem in ("b3_shared_input", "own_inplace_inside"):
        path = next(p for p in FILES if p.stem == stem)
        assert _outcome(path).summary != torch_raw_dedup(path)


@pytest.mark.parametrize(
    "stem", ["d05_input_mutation", "t02_multiple_region_groups", "d17_tuple_inputs"]
)
def test_rpl15_idempotent(stem: str) -> None:
    """RPL-15: a second run with the same tracker replaces nothing and changes nothing."""
    path = next(p for p in FILES if p.stem == stem)
    model_file = load_model_file(path)
    c = capture(model_file.model, model_file.example_inputs, model_file.dynamic)
    first = deduplicate(c.gm, c.tracker)
    code = c.gm.code
    second = deduplicate(c.gm, c.tracker)
    assert first.replaced and not second.replaced
    assert c.gm.code == code
