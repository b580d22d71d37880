"""A training compile of every deduplicated corpus model that trains (an input or a parameter
requires grad) succeeds, or the reference refused its regions beforehand (spec chapter 06,
CHK-17): AOTAutograd, forward and backward, on the reference's transformed module. About 30 s
of captures: in the real-model tier (make test-models)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.proof.training import compile_and_train, trains
from checker.proof.verdict import HOLDS, Verdict
from reference.dynamo.capture import capture
from reference.names import INVOKE
from reference.pipeline import deduplicate
from tests.support.corpus import corpus_files, load_model_file

pytestmark = [pytest.mark.full_models, pytest.mark.filterwarnings("ignore")]


def _trained(path: Path) -> tuple[str, Verdict] | None:
    """(file name, whether the training compile runs: HOLDS, or Violated with what it raised)
    for a model the reference deduplicated and that trains; None for any other."""
    model = load_model_file(path)
    if model.device != "cpu" or model.tracking_only:
        return None
    found = capture(model.model, model.example_inputs, model.dynamic)
    deduplicate(found.gm, found.tracker)
    called = any(n.target is INVOKE for n in found.gm.graph.nodes)
    if not called or not trains(found.gm, found.example_inputs):
        return None  # refused beforehand (or no group), or nothing trains
    return path.name, compile_and_train(found.gm, found.example_inputs)


@pytest.mark.spec("CHK-17")
def test_chk17_every_deduplicated_corpus_model_compiles_for_training() -> None:
    trained = [found for found in map(_trained, corpus_files()) if found is not None]
    names = {name for name, _ in trained}
    assert {"own_module_sublayers.py", "own_groupnorm.py", "own_autograd_function.py"} <= names
    assert [(name, ran) for name, ran in trained if ran != HOLDS] == []
