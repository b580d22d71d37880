"""The command line: verify, explain, bad input (README "Usage")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.cli import main

BAD_MODELS = {
    "syntax.py": "def model(:\n",
    "no_model.py": "import torch\nexample_inputs = (torch.ones(2),)\n",
    "no_inputs.py": "def model(x):\n    return x\n",
    "inputs_not_tuple.py": "import torch\ndef model(x):\n    return x\nexample_inputs = [1]\n",
    "raises_on_load.py": "raise RuntimeError('boom')\n",
    "fails_on_inputs.py": "import torch\ndef model(x):\n    return x @ x\n"
    "example_inputs = (torch.ones(2, 3),)\n",
    "graph_break.py": "import torch\ndef model(x):\n    torch._dynamo.graph_break()\n"
    "    return x + 1\nexample_inputs = (torch.ones(2),)\n",
}


def test_verify_bundled_example_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`fxoracle verify` with no path runs the bundled example and writes the JSON report."""
    out = tmp_path / "report.json"
    assert main(["verify", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["nodes"] > 100 and report["ok"] is True
    groups = report["region_groups"]
    assert len(groups) == 1 and len(groups[0]) >= 3
    assert len({len(r) for r in groups[0]}) == 1, "EXP-6: regions of a group have equal length"
    text = capsys.readouterr().out
    assert "region groups: 1" in text and f"{len(groups[0])} regions x" in text


@pytest.mark.parametrize("name", sorted(BAD_MODELS))
def test_bad_model_file_exits_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad input: one line on stderr, exit 2, no traceback, no report file."""
    path = tmp_path / name
    path.write_text(BAD_MODELS[name])
    report = tmp_path / "r.json"
    assert main(["verify", str(path), "--json", str(report)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fxoracle: error: "), err
    assert "Traceback" not in err
    assert not report.exists()


@pytest.mark.parametrize(
    "argv",
    [["verify", "missing.py"], ["verify", "--no-such-flag"], ["frobnicate"], []],
)
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_debug_shows_traceback(tmp_path: Path) -> None:
    """`--debug` re-raises the error so the traceback is visible."""
    path = tmp_path / "bad.py"
    path.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(Exception, match="boom"):
        main(["verify", str(path), "--debug"])


def test_explain_narrates_steps(capsys: pytest.CaptureFixture[str]) -> None:
    """EXP-10: explain prints each step with its verdict and the invariant id of refusals."""
    assert main(["explain", "--group", "0"]) == 0
    text = capsys.readouterr().out
    assert "Group 0:" in text and "-> all join" in text
    assert "refused by region 0: EXP-5" in text
    assert main(["explain", "--group", "7"]) == 2
