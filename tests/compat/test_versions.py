"""fxoracle on the torch that is installed (spec chapter 00, "Versions"): the behaviours that
differ between 2.11.0, 2.12.0, 2.13.0, 2.14.1 and 2.15.0 are read from one place, and a model
that sets TF32 through the new API verifies on each. `make compat` runs the whole suite on the
others."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from reference.torch_version import MIRRORED, TORCH, behaviour_of, release
from reference.track.keys import current_global_state
from tests.support.paths import ROOT


@pytest.mark.spec("TRK-2")
def test_behaviours_by_release() -> None:
    assert release("2.14.1+cu130") == (2, 14, 1) and release("2.15.0a0+git1") == (2, 15, 0)
    found = {v: behaviour_of(v) for v in MIRRORED}
    assert [b.version for b in found.values()] == list(MIRRORED)
    assert [b.tf32_key for b in found.values()] == ["allow_tf32"] * 4 + ["fp32_precision"]
    assert [b.hop_runs_body_eagerly for b in found.values()] == [False] * 3 + [True] * 2
    assert [b.hop_marks_from_body for b in found.values()] == [False, False, True, False, False]
    assert [b.linear_sort for b in found.values()] == [False] * 4 + [True]
    assert [b.split_attrs_last for b in found.values()] == [False] * 2 + [True] * 3
    assert [b.split_module_simple for b in found.values()] == [False] * 2 + [True] * 3
    assert [b.split_tuple_return for b in found.values()] == [False] + [True] * 4
    assert behaviour_of("2.12.1+cu130").version == "2.12.1"  # a patch release of a mirrored one
    assert behaviour_of(torch.__version__) == TORCH and TORCH.label.startswith("torch 2.")


@pytest.mark.spec("TRK-2")
def test_the_tf32_key_is_torch_s_and_never_raises() -> None:
    state = current_global_state()
    if TORCH.tf32_key == "fp32_precision":
        assert state.tf32 == torch.backends.cuda.matmul.fp32_precision
    else:
        assert state.tf32 is False  # torch's `_get_cublas_allow_tf32()` on a fresh process


@pytest.mark.spec("TRK-2")
def test_a_model_setting_tf32_through_the_new_api_verifies() -> None:
    """In its own process (the setting is global): torch 2.13.0 and 2.14.1's own tracker raise
    there (N6); fxoracle keys it and verifies the model on every release."""
    ran = subprocess.run(
        [sys.executable, "-m", "checker.cli", "verify", "tests/compat/models/tf32_precision.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ok: true" in ran.stdout and TORCH.label in ran.stdout
