"""The real-model tier: tiny, randomly initialised `transformers` models and hand-written blocks
with checkpointing, `cond`, nested compile regions, flex attention, dynamic shapes, `vmap`
(Mamba's scan), mixture-of-experts routing and dropout in train mode
(`tests/realmodels/`). On every one, `verify` is ok (or its only failing verdict is an Unknown
that names torch's runtime, CHK-17) and `diff` against torch blames no divergence on the
reference. `make test` runs the `FAST` ones; `make test-models` runs all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checker.io.model_file import load_model_file
from checker.oracle.compare.divergence import Blame, Kind
from checker.oracle.diff.driver import run_diff
from checker.proof.report import RUNTIME
from checker.proof.verdict import Holds, Unknown
from checker.tools.verify import run_verify
from tests.support.paths import ROOT

pytest.importorskip("transformers", reason="the real-model tier needs transformers (dev extra)")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub: every model is built from its config

MODELS = sorted((ROOT / "tests" / "realmodels").glob("*.py"))
FAST = {"gpt2", "bert", "t5", "llama_custom_act", "dynamic_blocks", "cond_blocks"}
# Models whose every region the reference refuses, and why: Mixtral's routing writes an index
# tensor in place (`inv_perm[perm] = ...`) between the layer region's nodes (RPL-9: a write
# of what the region reads lies between its nodes; RPL-7 for the two-node group that holds the
# write); torch outlines it and crashes.
NOTHING_REPLACED = {"mixtral": {"RPL-9", "RPL-7"}}
CASES = [
    pytest.param(p, id=p.stem, marks=() if p.stem in FAST else pytest.mark.full_models)
    for p in MODELS
]


@pytest.mark.spec("CHK-17", "RPL-20")
@pytest.mark.parametrize("path", CASES)
def test_verify_is_ok_on_a_real_model(path: Path) -> None:
    report = run_verify(path)
    check = report.result.check
    failing = [o for o in check.obligations if not isinstance(o.verdict, Holds)]
    for o in failing:  # only torch's runtime may fail, and then it is named
        assert o.id == RUNTIME and isinstance(o.verdict, Unknown), o.line()
        assert "torch's invoke_subgraph runtime" in o.verdict.reason, o.line()
    if path.stem in NOTHING_REPLACED:
        assert not report.result.dedup.replaced
        assert {r.reason.id for r in report.result.dedup.refused} == NOTHING_REPLACED[path.stem]
        return
    assert report.result.dedup.replaced, "a real model with repeated layers deduplicates"


@pytest.mark.spec("DIF-4")
@pytest.mark.parametrize("path", CASES)
def test_diff_never_blames_the_reference_on_a_real_model(path: Path) -> None:
    report = run_diff([load_model_file(path)], "torch", "all")
    for d in report.graphs[0].divergences:
        assert d.kind is not Kind.ORACLE_ERROR, d.detail
        assert d.blame not in (Blame.REFERENCE, Blame.BOTH), d.detail


def test_the_tier_covers_every_family() -> None:
    stems = {p.stem for p in MODELS}
    assert len(stems) >= 36
    decoders, encoders = {"gpt2", "llama", "mistral", "qwen2"}, {"bert", "roberta", "deberta_v2"}
    enc_dec = {"t5", "bart", "marian", "whisper"}
    vision = {"vit", "swin", "convnext", "clip_vision"}
    hops = {"llama_custom_act", "checkpoint_blocks", "cond_blocks", "nested_region", "llama_flex"}
    others = {"dynamic_blocks", "mamba", "mixtral", "gpt2_train"}  # vmap, MoE, dropout
    assert decoders | encoders | enc_dec | vision | hops | others <= stems
