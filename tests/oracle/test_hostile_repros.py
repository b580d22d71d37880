"""Hostile models for repros and campaigns: a repro is proved standalone in a fresh interpreter,
a model's own main block never runs, repro names are unique per model path, and a campaign file
is continued, never written over (spec chapter 08, DIF-15, DIF-16)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checker.cli import main
from tests.support.paths import CORPUS

pytestmark = pytest.mark.filterwarnings("ignore")

# B1 (torch's key ignores `alpha`), needing a custom op that a helper registers at import: in
# the shrinker's process the op outlives the statement, which therefore looks removable
CUSTOM_OP = """import torch


def _register():
    try:
        torch.ops.fxhostile.twice.default
    except (AttributeError, RuntimeError):
        lib = torch.library.Library("fxhostile", "FRAGMENT")
        _LIBS.append(lib)
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
        lib._register_fake("twice", lambda x: torch.empty_like(x))


_LIBS = []
_register()


def block(x, y, a):
    return torch.add(torch.sin(x), y, alpha=a).cos()


def model(x, y):
    outs = []
    for a in (0.25, 4.0):
        outs.append(block(x, y, a))
    return torch.ops.fxhostile.twice(outs[0]), outs[1]


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(8, 8, generator=_g), torch.rand(8, 8, generator=_g) * 3)
"""
MAIN_BLOCK = """

if __name__ == "__main__":
    import pathlib
    pathlib.Path({marker!r}).write_text("ran")
    raise SystemExit(0)
"""


def _fails_standalone_with_assertion(repro: Path) -> bool:
    """`python repro.py` in a fresh interpreter ends on a traceback of an AssertionError (its
    first unindented line after the last `Traceback`)."""
    done = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True,
                          timeout=300, check=False, cwd=repro.parent)  # fmt: skip
    last = done.stderr.split("Traceback (most recent call last):")[-1].splitlines()
    raised = next((line for line in last[1:] if line and not line.startswith(" ")), "")
    return done.returncode == 1 and raised.startswith("AssertionError")


@pytest.mark.spec("DIF-15")
def test_dif15_a_repro_keeps_what_the_model_did_at_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The registration looked removable in this process; the repro written keeps it and fails
    standalone with the promised AssertionError, not `no attribute 'twice'`."""
    model = tmp_path / "model.py"
    model.write_text(CUSTOM_OP)
    repros = tmp_path / "repros"
    argv = ["diff", str(model), "--against", "torch", "--component", "dedup"]
    assert main([*argv, "--repro-dir", str(repros)]) == 1
    capsys.readouterr()
    (repro,) = repros.iterdir()
    assert "lib.define" in repro.read_text()
    assert _fails_standalone_with_assertion(repro)


@pytest.mark.spec("DIF-15")
def test_dif15_a_model_s_main_block_never_runs_and_names_stay_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two `model.py` in two folders, each with a main block that would write a marker and
    exit 0: the diff reports both by their folders, writes two repros, and runs neither block."""
    marker = tmp_path / "marker"
    source = (CORPUS / "b1_alpha.py").read_text() + MAIN_BLOCK.format(marker=str(marker))
    paths = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "model.py")
        paths[-1].write_text(source)
    report, repros = tmp_path / "r.json", tmp_path / "repros"
    argv = ["diff", *map(str, paths), "--against", "torch", "--component", "dedup"]
    assert main([*argv, "--repro-dir", str(repros), "--json", str(report)]) == 1
    capsys.readouterr()
    graphs = json.loads(report.read_text())["graphs"]
    assert [g["graph"] for g in graphs] == ["a/model.py", "b/model.py"]
    written = sorted(p.name for p in repros.iterdir())
    assert written == ["a__model_dedup_repro.py", "b__model_dedup_repro.py"]
    assert not marker.exists(), "DIF-15: the model's own main block ran"
    assert all("SystemExit" not in (repros / name).read_text() for name in written)


def _campaign(out: Path, models: int, seed: int = 0) -> int:
    argv = ["fuzz", "--seed", str(seed), "--workers", "1", "--max-models", str(models)]
    return main([*argv, "--out", str(out)])


def _without_time(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text())
    del data["elapsed_s"]
    return dict(data)


@pytest.mark.spec("DIF-16")
def test_dif16_a_rerun_continues_the_campaign_and_never_empties_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shorter rerun keeps the file as it was; a longer one goes on from the next model and
    finds what one run of that length finds."""
    out, fresh = tmp_path / "f.json", tmp_path / "fresh.json"
    assert _campaign(out, 2) == 0
    before = _without_time(out)
    assert _campaign(out, 1) == 0
    assert _without_time(out) == before, "DIF-16: a rerun emptied the campaign"
    assert _campaign(out, 3) == 0 and _campaign(fresh, 3) == 0
    assert _without_time(out) == _without_time(fresh)
    assert "3 models" in capsys.readouterr().out


@pytest.mark.spec("DIF-16")
@pytest.mark.parametrize("other", ["another_seed", "not_a_campaign"])
def test_dif16_another_file_at_out_is_refused_untouched(
    other: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.json"
    if other == "another_seed":
        assert _campaign(out, 1, seed=5) == 0
    else:
        out.write_text("my notes, not a campaign\n")
    before = out.read_text()
    capsys.readouterr()
    assert _campaign(out, 1) == 2
    err = capsys.readouterr().err
    told = {"another_seed": "choose another --out", "not_a_campaign": "not an fxoracle fuzz"}
    assert err.count("\n") == 1 and told[other] in err  # FIL-18 for a file fxoracle did not write
    assert out.read_text() == before
