"""Chapter 11 worked example: the example plug-in, then its twin that orders a write against
the written node's direct users only (`IgnoresViews`), each diffed against the reference on
A1 (a view of `h` read around an in-place update of `h`)."""

from pathlib import Path

from checker.io.model_file import load_model_file
from checker.oracle.diff.driver import run_diff
from checker.oracle.diff.report import render_text

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus"
model = load_model_file(CORPUS / "a1_view_read_then_base_update.py")
for plug_in in ("example:Example", "planted:IgnoresViews"):
    report = run_diff([model], f"checker.oracle.plugins.{plug_in}", "dedup")
    print(render_text(report), end="")
