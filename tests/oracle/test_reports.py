"""What the oracle's reports say (spec chapter 08, DIF-31): shipped JSON Schemas that `verify`,
`diff` and `fuzz` outputs satisfy; crash details never cut mid-value; a plug-in's refusals
shown; a capture's module named apart from `CapturedGraph`; the first difference that matters;
a message that ends like its context quoted."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from checker.cli import main
from checker.io.model_file import load_model_file
from checker.oracle.diff.driver import run_diff
from checker.oracle.sides.loading import load_impl
from reference.dynamo.capture import CAPTURE_MODULE
from reference.errors import FxOracleError
from tests.support.corpus import CORPUS_DIR
from tests.support.json_schema import errors

EXAMPLE = "checker.oracle.plugins.example:Example"
TENSOR_RAISES = """
import torch


class Prints:
    def deduplicate(self, graph):
        raise ValueError(f"bad operand:\\n{torch.arange(6.0).reshape(2, 3)}")
"""


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(
        files("checker").joinpath(f"schemas/{name}.json").read_text()
    )
    return schema


@pytest.mark.spec("DIF-31")
def test_dif31_verify_diff_and_fuzz_json_satisfy_the_shipped_schemas(tmp_path: Path) -> None:
    """The schemas ship with the package (package data) and hold for real outputs: a split
    verify, one model's diff and two models' diff (with a free choice and a blame), a fuzz
    campaign with findings; a report missing a key breaks them."""
    d05 = str(CORPUS_DIR / "d05_input_mutation.py")
    outs = {k: tmp_path / f"{k}.json" for k in ("verify", "diff1", "diff2", "fuzz")}
    assert main(["verify", d05, "--split", "every-4", "--json", str(outs["verify"])]) == 0
    a5 = str(CORPUS_DIR / "a5_write_through_view.py")
    assert main(["diff", a5, "--against", EXAMPLE, "--json", str(outs["diff1"])]) == 0
    planted = "checker.oracle.plugins.planted:WritesInputs"
    assert main(["diff", a5, d05, "--against", planted, "--component", "dedup",
                 "--json", str(outs["diff2"])]) == 1  # fmt: skip
    assert main(["fuzz", "--max-models", "2", "--workers", "1", "--against", planted,
                 "--out", str(outs["fuzz"])]) in (0, 1)  # fmt: skip
    for out, name in ((outs["verify"], "verify"), (outs["diff1"], "diff"),
                      (outs["diff2"], "diff"), (outs["fuzz"], "fuzz")):  # fmt: skip
        report = json.loads(out.read_text())
        assert errors(report, _schema(name)) == [], (out.name, errors(report, _schema(name)))
    broken = json.loads(outs["verify"].read_text())
    del broken["checks"]["acyclic"]
    assert errors(broken, _schema("verify")) == ["$.checks: no 'acyclic'"]


@pytest.mark.spec("DIF-31")
def test_dif31_a_crash_is_told_whole_and_refusals_are_shown(tmp_path: Path) -> None:
    """A plug-in's exception holding a printed tensor is reported on one line with the whole
    tensor; the example's refusals are shown where its graph differs from the reference's; the
    first difference shown is a node one side lacks, not a fetch against a placeholder."""
    (tmp_path / "prints_plug.py").write_text(TENSOR_RAISES)
    d01 = load_model_file(CORPUS_DIR / "d01_single_subgraph.py")
    crash = run_diff([d01], f"{tmp_path / 'prints_plug.py'}:Prints", "dedup")
    (d,) = crash.graphs[0].divergences
    assert "bad operand: tensor([[0., 1., 2.], [3., 4., 5.]])" in d.detail, d.detail
    draws = load_model_file(CORPUS_DIR / "own_draws.py")
    (free,) = run_diff([draws], EXAMPLE, "dedup").graphs[0].divergences
    assert "Example said (3 refusals): region at " in free.detail, free.detail
    assert free.detail.startswith("first node only one side has: reference node "), free.detail
    assert "`get_attr" not in free.detail.split(";")[0]


@pytest.mark.spec("DIF-31")
def test_dif31_names_and_messages_read_once(tmp_path: Path) -> None:
    """The capture's module is not called `CapturedGraph` (the contract's name for what holds
    it); a plug-in whose message ends in "at import" is quoted, not said twice."""
    assert CAPTURE_MODULE != "CapturedGraph"
    (tmp_path / "boom_plug.py").write_text("raise RuntimeError('boom at import')\n")
    with pytest.raises(FxOracleError) as raised:
        load_impl(f"{tmp_path / 'boom_plug.py'}:X")
    assert str(raised.value).endswith("raised RuntimeError('boom at import') at import")
