"""`fxoracle fuzz` and `diff` on the command line (spec chapter 08, DIF-32): `--fail-on plugin`
fails a campaign that blames the side under test, the campaign's counts are the diff's for the
same models, and both say how far they are on stderr, a line per model off a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.cli import main

EXAMPLE = "checker.oracle.plugins.example:Example"
CRASHES = """
class Crashes:
    def deduplicate(self, graph):
        raise ValueError("my own bug")
"""


@pytest.mark.spec("DIF-32")
def test_dif32_fail_on_plugin_fails_a_campaign_that_blames_the_plug_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "crash_plug.py").write_text(CRASHES)
    against = f"{tmp_path / 'crash_plug.py'}:Crashes"
    argv = ["fuzz", "--max-models", "1", "--workers", "1", "--against", against]
    assert main([*argv, "--out", str(tmp_path / "a.json")]) == 0  # fxoracle's own bugs only
    assert main([*argv, "--out", str(tmp_path / "b.json"), "--fail-on", "plugin"]) == 1
    out, err = capsys.readouterr()
    assert f"blamed on {against}: dedup/crash/{against}/" in out
    assert "fuzz: 1/1 findings=1, fxoracle_bugs=0" in err


@pytest.mark.spec("DIF-32")
def test_dif32_fuzz_counts_what_diff_says_of_the_same_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three random models against the honest example: the campaign's diverging models are the
    diff's models that do not agree (free choices agree, DIF-24), its counts by blamed side the
    diff's; the diff prints a progress line per model on stderr."""
    out = tmp_path / "f.json"
    common = ["--against", EXAMPLE, "--workers", "1"]
    assert main(["fuzz", "--max-models", "3", "--out", str(out), *common]) == 0
    diffed = tmp_path / "d.json"
    assert main(["diff", "--random", "3", "--json", str(diffed), *common]) == 0
    err = capsys.readouterr().err
    assert [ln.split()[:2] for ln in err.splitlines() if ln.startswith("diff: ")] == [
        ["diff:", "1/3"], ["diff:", "2/3"], ["diff:", "3/3"],
    ]  # fmt: skip
    campaign, report = json.loads(out.read_text()), json.loads(diffed.read_text())
    summary = report["summary"]
    assert campaign["models"] == summary["graphs"] == 3
    assert campaign["diverging_models"] == summary["graphs"] - summary["agree"]
    assert campaign["by_wrong"] == summary["by_wrong"]
