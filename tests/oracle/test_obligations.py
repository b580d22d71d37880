"""The other side's output is always judged by the checker's obligations, whatever its
meaning (spec chapter 08, DIF-27): a violated one blames it with the obligation's id, the cause
where known, a spec line and a repro."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.io.model_file import load_model_file
from checker.oracle.compare.divergence import Blame
from checker.oracle.compare.obligations import spec_line, violation_of
from checker.oracle.diff.driver import run_diff
from checker.proof.report import ACYCLIC, WELL_FORMED, obligation
from checker.proof.verdict import Violated
from tests.support.corpus import CORPUS_DIR
from tests.support.repros import fails_from_elsewhere

WRITES = "checker.oracle.plugins.planted:WritesInputs"
A5 = CORPUS_DIR / "a5_write_through_view.py"


@pytest.mark.spec("DIF-27")
def test_dif27_an_outlined_write_with_the_same_meaning_is_blamed(tmp_path: Path) -> None:
    """`WritesInputs` outlines `h.view(-1).mul_(2)`: inlined, its graph means what the
    reference's means and runs like the original; CHK-15 still blames it, with a repro that
    fails standalone from another directory."""
    report = run_diff([load_model_file(A5)], WRITES, "dedup", repro_dir=tmp_path / "r")
    (graph,) = report.graphs
    (d,) = graph.divergences
    assert d.blame is Blame.OTHER and d.evidence.violated == "CHK-15"
    assert d.evidence.same_meaning
    assert "CHK-15 violated (writes to an input): mul_ mutates the subgraph's input" in d.detail
    assert "spec: specs/06-checker.md:" in d.detail
    (repro,) = graph.repros
    assert "CHK-15" in fails_from_elsewhere(repro, tmp_path / "elsewhere")


@pytest.mark.spec("DIF-27")
def test_dif27_the_honest_example_is_not_blamed_on_a5() -> None:
    report = run_diff([load_model_file(A5)], "checker.oracle.plugins.example:Example", "dedup")
    assert not report.fails, [d.detail for g in report.graphs for d in g.divergences]


@pytest.mark.spec("DIF-27")
def test_dif27_the_innermost_obligation_is_named_with_its_spec_line() -> None:
    """A well-formedness witness naming CHK-15 is reported as CHK-15, its whole witness kept
    (never cut at a newline), with the heading's line in the checker chapter."""
    witness = "CHK-1: invoke_subgraph: CHK-15: mul_ mutates\nthe subgraph's input input_0"
    found = violation_of(obligation(WELL_FORMED, Violated(witness)))
    assert (found.id, found.cause) == ("CHK-15", "writes to an input")
    assert found.witness == "mul_ mutates the subgraph's input input_0"
    chapter = (Path(__file__).parents[2] / "specs" / "06-checker.md").read_text().splitlines()
    line = int(spec_line("CHK-15").split(":")[1].split()[0])
    assert chapter[line - 1].startswith("### CHK-15 ")
    plain = violation_of(obligation(ACYCLIC, Violated("a cycle: a -> b -> a")))
    assert (plain.id, plain.cause, plain.witness) == ("CHK-2", "", "a cycle: a -> b -> a")
