"""The command line: verify, explain, bad input (README "Usage")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from checker.cli import main
from checker.proof.report import NAMES, Report, obligation
from checker.proof.verdict import HOLDS, Violated
from checker.tools.verify import checks_json
from reference.torch_version import TORCH
from tests.support.models import Stack

COMMANDS = ("verify", "diff", "explain", "fuzz", "bench", "course")
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
    assert set(report) == SCHEMA and report["torch"] == TORCH.version
    assert report["invoke_calls"] == len(groups[0]) == len(report["replaced"])
    (count,) = report["subgraphs"].values()
    assert count >= len(groups[0][0]) + 2, "the representative plus placeholders and output"
    assert report["checks"] == dict.fromkeys(CHECKS, "holds")
    assert all(k.endswith("_s") for k in report["timings"])
    text = capsys.readouterr().out
    assert "region groups: 1" in text and f"{len(groups[0])} regions x" in text


SCHEMA = {"$fxoracle", "model", "torch", "device", "nodes", "region_groups", "subgraphs",
          "invoke_calls", "replaced", "refused", "region_outcomes", "checks", "obligations", "ok",
          "timings"}  # fmt: skip
CHECKS = ("well_formed", "acyclic", "dependencies_preserved", "shapes_proven", "outputs_match",
          "runs_in_torch")  # fmt: skip
from tests.support.paths import CORPUS, EXAMPLES  # noqa: E402

GM_FILE = (
    "import torch\n"
    "class M(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        for _ in range(3):\n"
    "            x = torch.sin(x) * 2 + x\n"
    "        return x\n"
    "gm = torch.fx.symbolic_trace(M())\n"
    "example_inputs = (torch.randn(4),)\n"
)


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json", "-"])
    return code, json.loads(capsys.readouterr().out)


def test_verify_dynamic_example_proves_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    """CHK-5 on the bundled dynamic example: symbolic sizes proved equal at every call."""
    code, report = _json(["verify", str(EXAMPLES / "dynamic_mlp.py")], capsys)
    assert code == 0 and report["checks"]["shapes_proven"] == "holds"
    assert report["invoke_calls"] >= 2


def test_verify_refusals_carry_ids(capsys: pytest.CaptureFixture[str]) -> None:
    """RPL-7: refused regions are reported with their invariant id and reason."""
    code, report = _json(["verify", str(CORPUS / "d05_input_mutation.py")], capsys)
    assert code == 0
    assert {r["id"] for r in report["refused"]} == {"RPL-7"}
    assert all(r["reason"].startswith("RPL-7: ") and r["nodes"] for r in report["refused"])


def test_verify_fake_cuda_numbers_hold_on_the_cpu_and_say_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A CUDA graph on a machine without CUDA: the numbers run on the CPU, never silently."""
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the graph runs on CUDA")
    code, report = _json(["verify", str(CORPUS / "own_fake_cuda_block.py")], capsys)
    assert code == 0 and report["checks"]["outputs_match"] == "holds"
    (numbers,) = [o for o in report["obligations"] if o["id"] == "CHK-6"]
    assert numbers["note"].startswith("run on the CPU")


def test_verify_exit_1_when_a_check_is_not_proved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A graph-module file whose example inputs live on the meta device: nothing can be run,
    numbers are unknown, so the run is not ok (exit 1)."""
    path = tmp_path / "meta.py"
    path.write_text(GM_FILE.replace("torch.randn(4)", 'torch.empty(4, device="meta")'))
    code, report = _json(["verify", str(path)], capsys)
    assert code == 1 and report["ok"] is False
    assert report["checks"]["outputs_match"] == "unknown"


@pytest.mark.parametrize("policy", ["per-region", "every-7"])
def test_verify_split_policies(policy: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--split` splits the deduplicated module and checks the split too."""
    code, report = _json(["verify", "--split", policy], capsys)
    assert code == 0 and report["split"]["policy"] == policy
    assert len(report["split"]["partitions"]) >= 2
    assert report["split"]["checks"] == dict.fromkeys(CHECKS, "holds")
    assert {o["id"] for o in report["split"]["obligations"]} == set(NAMES)


@pytest.mark.parametrize("failing", sorted(NAMES))
def test_verify_json_checks_name_every_obligation_that_fails(failing: str) -> None:
    """`checks` is not all `holds` whenever `ok` is false: a split whose CHK-1 was violated
    reported `ok: false` beside five checks that held."""
    failed = Violated("the witness")
    report = Report(tuple(obligation(c, failed if c == failing else HOLDS) for c in NAMES))
    assert not report.ok and list(checks_json(report).values()).count("violated") == 1


def test_verify_bad_split_policy_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--split", "every-0"]) == 2
    assert "every-N" in capsys.readouterr().err


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


@pytest.mark.parametrize("argv", [["--help"], *([c, "--help"] for c in COMMANDS)])
def test_help_is_exit_0_with_its_usage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: fxoracle") and err == ""


def test_help_as_a_command_is_exit_0_without_a_traceback() -> None:
    """The console script runs in a supervised child (FIL-11): `--help` is still exit 0."""
    done = subprocess.run([sys.executable, "-m", "checker.cli", "verify", "--help"],
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "") and "usage: fxoracle verify" in done.stdout


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


def test_verify_pt2_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An exported program is keyed offline (TRK-10), deduplicated, checked and drawn."""
    path = tmp_path / "blocks.pt2"
    torch.manual_seed(0)
    exported = torch.export.export(Stack(), (torch.randn(2, 8),))
    torch.export.save(exported, str(path))
    html = tmp_path / "report.html"
    code = main(["verify", str(path), "--json", "-", "--html", str(html)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["invoke_calls"] == 3
    assert report["checks"] == dict.fromkeys(CHECKS, "holds")
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 2


def test_verify_corrupt_pt2_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.pt2"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    html = tmp_path / "r.html"
    assert main(["verify", str(path), "--html", str(html)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and not html.exists()


def test_verify_graph_module_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Python file defining `gm` and `example_inputs` is verified like a model file."""
    path = tmp_path / "gm_file.py"
    path.write_text(GM_FILE)
    code, report = _json(["verify", str(path)], capsys)
    assert code == 0 and report["nodes"] == 11
    assert report["checks"] == dict.fromkeys(CHECKS, "holds")


def test_diff_cli_agrees_where_torch_is_right(capsys: pytest.CaptureFixture[str]) -> None:
    """`fxoracle diff` exits 0 when both sides agree; `--json -` carries only JSON."""
    code, report = _json(
        ["diff", str(CORPUS / "t01_single_region_group.py"), "--against", "torch",
         "--component", "tracker"], capsys)  # fmt: skip
    assert code == 0 and report["agree"] is True and report["divergences"] == []


def test_diff_cli_blames_torch_on_b2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 on a divergence; the report names the wrong side and writes a repro."""
    argv = ["diff", str(CORPUS / "b2_targets.py"), "--against", "torch", "--component", "dedup",
            "--repro-dir", str(tmp_path)]  # fmt: skip
    code, report = _json(argv, capsys)
    assert code == 1 and report["agree"] is False
    assert {d["wrong"] for d in report["divergences"]} == {"torch"}
    (repro,) = report["repros"]
    assert Path(repro).is_file()


def test_diff_cli_needs_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--against", "torch"]) == 2
    assert "--random" in capsys.readouterr().err


def test_diff_prints_no_traceback_when_torch_crashes(capfd: pytest.CaptureFixture[str]) -> None:
    """torch's pass crashes (N3): the diff says so in its report; nothing of torch's reaches
    stderr without --debug."""
    code = main(["diff", str(CORPUS / "own_autograd_function.py"), "--against", "torch",
                 "--component", "dedup"])  # fmt: skip
    out, err = capfd.readouterr()
    assert code == 1 and "dedup crash: wrong=torch" in out and "KeyError" in out
    assert err == "diff: 1/1 own_autograd_function.py fail (so far diverge=1 fail=1)\n"  # progress


def test_diff_fail_on_reference_ignores_torch_s_bugs(capsys: pytest.CaptureFixture[str]) -> None:
    """`--fail-on reference` (fxoracle's own CI, `make corpus-diff`): torch's B2 is reported, the
    exit status is 0; `--fail-on any` (the default) fails on it."""
    argv = ["diff", str(CORPUS / "b2_targets.py"), "--against", "torch", "--component", "dedup"]
    assert main([*argv, "--fail-on", "reference"]) == 0
    assert "wrong=torch" in capsys.readouterr().out
    assert main(argv) == 1
