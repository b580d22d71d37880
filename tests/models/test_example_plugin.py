"""The honest example plug-in on the corpus and 200 random models (spec chapter 08, DIF-1):
never blamed, so `fxoracle diff ... --against checker.oracle.plugins.example:Example` agrees and
exits 0.
Part of the slow tier (`make test-models`); `make test` runs 30 random models
(`tests/oracle/test_plugins.py`)."""

from __future__ import annotations

import pytest

from checker.io.model_file import load_model_file
from checker.oracle.diff.driver import run_diff
from tests.support.corpus import corpus_files

pytestmark = [pytest.mark.full_models, pytest.mark.filterwarnings("ignore")]


@pytest.mark.spec("DIF-1", "DIF-6", "DIF-24")
def test_dif1_the_example_is_never_blamed_on_the_corpus_and_200_random_models() -> None:
    """Never blamed, and where it differs a free choice: every model agrees."""
    models = [load_model_file(p) for p in corpus_files()]
    report = run_diff(models, "checker.oracle.plugins.example:Example", "all", random=200, seed=0)
    assert not report.fails, [
        d.detail for g in report.graphs for d in g.divergences if d.blame.blames_a_side
    ]
    assert report.agree, [d.detail for g in report.graphs for d in g.divergences]
