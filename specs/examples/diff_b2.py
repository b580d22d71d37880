"""Chapter 08 worked example: the oracle diffs the reference against torch on scenario B2
(`for f in (sin, cos, sin)` at one call site): every component, each difference judged, blamed
on the side the evidence shows wrong, and matched against the catalogue of torch's bugs."""

from pathlib import Path

from checker.io.model_file import load_model_file
from checker.oracle.diff.driver import run_diff
from checker.oracle.diff.report import render_text

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus"
report = run_diff([load_model_file(CORPUS / "b2_targets.py")], "torch")
print(render_text(report), end="")
