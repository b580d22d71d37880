"""Random models for the differential oracle, and a small campaign (spec chapter 08, DIF-6,
DIF-7, DIF-9)."""

from __future__ import annotations

import itertools
import json
import math
import re
import runpy
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings

import checker.oracle.campaign.fuzz
from checker.cli import main
from checker.oracle.campaign.findings import Campaign
from checker.oracle.campaign.fuzz import run_campaign
from checker.oracle.campaign.randmodels import (
    DRAWS,
    FAMILIES,
    VIEW_WRITES,
    ModelSpec,
    model_specs,
    random_model,
    random_source,
    random_spec,
    render,
)
from checker.oracle.compare.run import capture_for, diff_capture
from checker.oracle.repro.prover import fails_with_assertion
from checker.oracle.repro.text import version_guard
from checker.oracle.repro.write import write_repros
from checker.oracle.sides.sides import make_sides
from reference.dynamo.capture import Capture, capture
from tests.support.campaigns import finding_of

pytestmark = pytest.mark.filterwarnings("ignore")


def _run_eagerly(source: str, tmp_path: Path, name: str = "m.py") -> list[torch.Tensor]:
    path = tmp_path / name
    path.write_text(source)
    ns = runpy.run_path(str(path))
    out = ns["model"](*ns["example_inputs"])
    return [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


@pytest.mark.spec("DIF-6")
def test_dif6_seeded_generator_is_reproducible() -> None:
    assert random_source(3, 5) == random_source(3, 5)
    assert random_source(3, 5) != random_source(3, 6) != random_source(4, 5)
    assert random_spec(3, 5) == random_spec(3, 5)


@pytest.mark.spec("DIF-6")
def test_dif6_seeded_models_are_valid_and_varied(tmp_path: Path) -> None:
    """60 models run eagerly with finite outputs; together they use every variation."""
    specs = [random_spec(0, i) for i in range(60)]
    for i, spec in enumerate(specs):
        outs = _run_eagerly(render(spec), tmp_path, f"m{i}.py")
        assert outs and all(bool(torch.isfinite(t.float()).all()) for t in outs), i
    calls = [c for s in specs for c in s.calls]
    assert {c.context for c in calls} >= {"", "torch.no_grad()"}
    assert any("autocast" in c.context for c in calls)
    assert any(c.first == c.second for c in calls)  # one tensor passed twice (B3's pattern)
    assert len({c.const for c in calls}) == 3 and len({c.target for c in calls}) == 3
    assert any(s.dynamic for s in specs) and any(not s.dynamic for s in specs)
    inputs = [x for s in specs for x in s.inputs]
    assert {x.dtype for x in inputs} == {"float32", "float64"}
    assert {x.requires_grad for x in inputs} == {False, True}
    assert len({x.shape for x in inputs}) == 2
    statements = {st for s in specs for st in s.body}
    assert any("add_" in st for st in statements) and any("chunk" in st for st in statements)


@pytest.mark.spec("DIF-6")
@settings(max_examples=15)
@given(model_specs())
def test_dif6_hypothesis_models_run_eagerly(spec: ModelSpec) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        outs = _run_eagerly(render(spec), Path(tmp))
    assert all(math.isfinite(float(t.float().abs().max())) for t in outs)


@pytest.mark.spec("DIF-6")
def test_dif6_models_capture_as_one_graph() -> None:
    for i in range(4):
        mf = random_model(1, i)
        assert mf.name == f"random_1_{i}" and mf.source == random_source(1, i)
        c = capture(mf.model, mf.example_inputs, mf.dynamic)
        assert any(n.op == "call_function" for n in c.gm.graph.nodes)


@pytest.mark.spec("DIF-7", "DIF-8")
def test_dif7_a_random_divergence_shrinks_to_a_failing_repro(tmp_path: Path) -> None:
    """random_0_0 (the `constants` family) calls a block with `alpha=3.0` and `alpha=0.5`,
    which torch's key merges (B1): the dedup repro is smaller than the generated model and
    fails on torch's side."""
    model = random_model(0, 0)
    sides = make_sides("torch", "dedup")
    graph = capture_for(model, sides)
    assert isinstance(graph, Capture)
    found = diff_capture(graph, sides)
    assert [(str(d.component), d.wrong) for d in found] == [("dedup", "torch")]
    (repro,) = write_repros(model, graph, found, sides, tmp_path / "repros").written
    assert fails_with_assertion(repro)
    text = repro.read_text()
    shrunk = text.replace(version_guard(), "").split("\ndef _fresh")[0]  # the model's lines
    model_lines = [ln for ln in shrunk.splitlines() if ln and not ln.startswith("#")]
    assert len(model_lines) < len([ln for ln in model.source.splitlines() if ln]) - 3
    assert "    return " in shrunk  # the model keeps its output


@pytest.mark.spec("DIF-9", "DIF-22")
def test_dif9_a_small_campaign_never_crashes_and_writes_findings(tmp_path: Path) -> None:
    out = tmp_path / "findings.json"
    campaign = run_campaign(5.0, 0, out, max_models=6)
    found = json.loads(out.read_text())
    assert found["models"] == campaign.models == 6
    assert not [f for f in found["findings"] if "oracle-error" in f["signature"]]
    assert found["by_wrong"].get("torch", 0) > 0
    for finding in found["findings"]:
        assert finding["source"].startswith('"""A generated model')
        fields = set(finding["divergence"])
        assert {"component", "kind", "wrong", "detail"} <= fields
        # DIF-12: a traceback only where a side raised; in split, raising refuses (DIF-22)
        kind, detail = finding["divergence"]["kind"], finding["divergence"]["detail"]
        raised = kind == "crash" or (kind == "refusal" and "] reference refused" not in detail)
        assert ("traceback" in fields) == raised


@pytest.mark.spec("DIF-9")
def test_dif9_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "f.json"
    argv = ["fuzz", "--minutes", "1", "--seed", "7", "--out", str(out), "--max-models", "2"]
    assert main(argv) == 0
    assert json.loads(out.read_text())["models"] == 2
    captured = capsys.readouterr()
    assert "2 models" in captured.out and "[  0:" in captured.err


@pytest.mark.spec("DIF-9")
@pytest.mark.parametrize(
    ("signature", "status"),
    [("dedup/graph/torch/", 0), ("dedup/crash/reference/", 1), ("all/oracle-error/unknown/", 1)],
)
def test_dif9_fxoracle_bugs_fail_the_campaign(
    signature: str, status: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """DIF-9: an oracle error or a divergence blamed on the reference is fxoracle's own bug:
    the campaign names it and exits 1; torch's bugs are findings, not failures."""
    found = Campaign(seed=0, against="torch", findings={signature: finding_of(signature)})
    monkeypatch.setattr(checker.oracle.campaign.fuzz, "run_campaign", lambda *a, **k: found)
    assert main(["fuzz", "--minutes", "1"]) == status
    named = f"fxoracle's own bugs (DIF-9): {signature}" in capsys.readouterr().out
    assert named == bool(status)


def _constructs(spec: ModelSpec) -> set[str]:
    """The construct families a model holds, read off its spec (not its `family` label)."""
    calls, body = spec.calls, " ".join(spec.body)
    twins = [(a, b) for a, b in itertools.pairwise(calls) if replace(a, const=b.const) == b]
    draws = [st for st in spec.body if st in DRAWS]
    found = {
        "constants": any(a.const != b.const for a, b in twins) and "alpha=s" in body,
        "written_views": bool(spec.view) and any(w in VIEW_WRITES for w in _bare(spec.after)),
        "shared_operands": any(c.second == f"{c.first}[:]" for c in calls),
        "several_outputs": {"[0]", "[1]"} <= set(spec.kept),
        "input_view_writes": "g[:, 1:].mul_" in body or "g[0].add_" in body,
        "draws": bool(draws and spec.draw),
        "dynamic": spec.dynamic,
    }
    return {name for name, held in found.items() if held}


def _bare(writes: tuple[str, ...]) -> list[str]:
    """The writes of a view's base, with the base named `x` again."""
    return [re.sub(r"x\d+", "x", w) for w in writes]


@pytest.mark.spec("DIF-6")
@pytest.mark.parametrize("seed", [0, 1, 2, 17])
def test_dif6_every_seeds_first_models_hold_every_construct_family(seed: int) -> None:
    """Any seed's first seven models hold, between them, every construct family (a view of an
    input read and then written through a view, operands sharing storage, several outputs, a
    write to a view of an input, draws, symbolic sizes, calls differing by a constant), each in
    the model its rotation gives it; the families the generator labels them with agree."""
    specs = [random_spec(seed, i) for i in range(len(FAMILIES))]
    held = [_constructs(s) for s in specs]
    assert set().union(*held) == set(FAMILIES)
    for spec, constructs in zip(specs, held, strict=True):
        assert spec.family in constructs, (spec.family, render(spec))
    assert {s.family for s in specs} == set(FAMILIES)
