"""Chapter 02 example: a model with no group (scenario B2, `for f in (sin, cos, sin): f(x) * 2`).
`fxoracle explain` says why (EXP-14): the muls' group was dropped because its first step met
`cos`, which keys apart from `sin` by its target."""

from pathlib import Path

from checker.tools.explain import render_text, run_explain

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus"
lesson, _ = run_explain(CORPUS / "b2_targets.py")
print(render_text(lesson), end="")
