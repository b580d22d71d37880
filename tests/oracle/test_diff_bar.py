"""The progress bar of a multi-model `fxoracle diff` (spec chapter 08)."""

from __future__ import annotations

import io

from checker.io.model_file import load_model_file
from checker.oracle.diff.driver import DiffBar, run_diff
from tests.support.paths import CORPUS


def test_the_bar_counts_models_divergences_and_failures() -> None:
    """One bar step per model; the postfix names the last model and its own outcome, and counts
    the models so far that diverge and those that fail (a side blamed: B1 is torch's bug)."""
    models = [
        load_model_file(CORPUS / f"{stem}.py")
        for stem in ("t01_single_region_group", "b1_float_constants")
    ]
    out = io.StringIO()
    with DiffBar(out, enabled=True) as bar:
        report = run_diff(models, "torch", "tracker", progress=bar)
    shown = out.getvalue()
    assert "/2 [" in shown and "b1_float_constants.py fail (so far diverge=1 fail=1)" in shown, (
        shown
    )
    assert [g.agree for g in report.graphs] == [True, False]


def test_a_line_per_model_off_a_terminal() -> None:
    """No bar where stderr is no terminal, but one line per model (DIF-32); none when the bar
    is switched off."""
    out = io.StringIO()
    model = load_model_file(CORPUS / "t01_single_region_group.py")
    with DiffBar(out) as bar:  # a StringIO is no terminal
        run_diff([model], "torch", "tracker", progress=bar)
    assert (
        out.getvalue() == "diff: 1/1 t01_single_region_group.py agree (so far diverge=0 fail=0)\n"
    )
    off = io.StringIO()
    with DiffBar(off, enabled=False) as bar:
        run_diff([model], "torch", "tracker", progress=bar)
    assert off.getvalue() == ""


def test_dif32_each_line_tells_its_own_model_apart_from_the_totals() -> None:
    """A model that agrees after one that failed says `agree`, however the totals read (with
    several workers the lines come in completion order)."""
    models = [
        load_model_file(CORPUS / f"{stem}.py")
        for stem in ("b1_float_constants", "t01_single_region_group")
    ]
    out = io.StringIO()
    with DiffBar(out) as bar:
        run_diff(models, "torch", "tracker", progress=bar)
    assert out.getvalue().splitlines() == [
        "diff: 1/2 b1_float_constants.py fail (so far diverge=1 fail=1)",
        "diff: 2/2 t01_single_region_group.py agree (so far diverge=1 fail=1)",
    ]
