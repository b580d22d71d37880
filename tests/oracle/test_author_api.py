"""The library API for plug-in authors (spec chapter 08, DIF-30): a plug-in and its tests,
written from the README alone in a folder of their own, run `assert_agrees` in their own pytest;
in this process, an honest pass agrees and a planted bug fails with the divergence text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from checker.oracle.diff.author import assert_agrees, capture_model, diff_pass, judge_dedup
from checker.oracle.plugins.example import Example
from checker.oracle.plugins.planted import WritesInputs
from tests.support.corpus import CORPUS_DIR

ROOT = Path(__file__).resolve().parents[2]
AUTHORS_TESTS = """
import pytest
import torch

from checker.oracle.diff.author import assert_agrees, capture_model, judge_dedup
from checker.oracle.protocol import CapturedGraph, DedupOutput

MODEL = {model!r}


class Mine:
    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        return DedupOutput(graph.gm)  # outlines nothing: right, a free choice


class Doubles:
    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        output = next(n for n in graph.gm.graph.nodes if n.op == "output")
        first = output.args[0][0]
        with graph.gm.graph.inserting_before(output):
            doubled = graph.gm.graph.call_function(torch.mul, (first, 2))
        output.args = ((doubled, *output.args[0][1:]),)
        return DedupOutput(graph.gm)


def test_mine_agrees():
    assert_agrees(Mine, MODEL, component="dedup")


def test_a_wrong_pass_fails_with_the_divergence():
    with pytest.raises(AssertionError, match="numbers differ"):
        assert_agrees(Doubles(), MODEL, component="dedup")


def test_capture_run_and_judge():
    graph = capture_model(MODEL)
    assert judge_dedup(graph, Mine().deduplicate(graph.copy())) == ""
    assert "numbers differ" in judge_dedup(graph, Doubles().deduplicate(graph.copy()))
"""


@pytest.mark.spec("DIF-30")
def test_dif30_an_author_s_own_pytest_runs_assert_agrees(tmp_path: Path) -> None:
    model = CORPUS_DIR / "d01_single_subgraph.py"
    (tmp_path / "test_mine.py").write_text(AUTHORS_TESTS.format(model=str(model)))
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
            "test_mine.py"]  # fmt: skip
    ran = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300, check=False)  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert "3 passed" in ran.stdout


@pytest.mark.spec("DIF-30")
def test_dif30_assert_agrees_fails_with_the_divergence_text() -> None:
    a5 = CORPUS_DIR / "a5_write_through_view.py"
    assert_agrees(Example, a5, component="dedup")
    with pytest.raises(AssertionError, match="CHK-15 violated"):
        assert_agrees(WritesInputs(), a5, component="dedup")
    found = diff_pass("checker.oracle.plugins.planted:WritesInputs", a5, "dedup")
    assert found.fails and "DIVERGE" in found.text


@pytest.mark.spec("DIF-30")
def test_dif30_a_dynamic_model_is_captured_as_its_file_says() -> None:
    path = CORPUS_DIR / "own_dynamic.py"
    graph = capture_model(path)
    assert graph.dynamic and not capture_model(path, dynamic=False).dynamic
    assert judge_dedup(graph, Example().deduplicate(graph.copy())) == ""
