"""The library API for plug-in authors (spec chapter 08, DIF-30; README "As a plug-in author"):
capture a model file, run one's own pass on the capture, compare it with the reference per
component, and fail a pytest test with the divergence text.

    from checker.oracle.diff.author import assert_agrees, capture_model, diff_pass, judge_dedup

    graph = capture_model("tests/corpus/own_dynamic.py")  # static or dynamic: as the file says
    out = Mine().deduplicate(graph.copy())                # one's own pass, on one's own copy
    print(judge_dedup(graph, out) or "right")             # run and checked as `diff` judges it
    print(diff_pass(Mine, "tests/corpus/a5_write_through_view.py", "dedup").text)
    assert_agrees(Mine, "tests/corpus/a5_write_through_view.py", component="dedup")

A pass is an implementation object, its class (instantiated without arguments), or an
`--against` string (`mypkg.dedup:Mine`, `path/to/mine.py:Mine`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from checker.io.model_file import load_model_file
from checker.oracle.compare.judge import judge_transformation
from checker.oracle.diff.driver import diff_model
from checker.oracle.diff.report import DiffReport, GraphDiff, render_text
from checker.oracle.protocol import DedupOutput
from checker.oracle.sides.contract import dedup_output
from checker.oracle.sides.sides import Sides, make_sides, sides_for, skipped_components
from reference.dynamo.capture import Capture, capture


def capture_model(path: str | Path, dynamic: bool | None = None) -> Capture:
    """The model file at `path` captured as `diff` captures it (a `CapturedGraph`: `gm`,
    `tracker`, `example_inputs`, `dynamic`; `copy()` gives each run its own); `dynamic`
    overrides the file's `dynamic` (default: what the file says)."""
    model = load_model_file(path)
    symbolic = model.dynamic if dynamic is None else dynamic
    return capture(model.model, model.example_inputs, symbolic)


def judge_dedup(graph: Capture, output: DedupOutput) -> str:
    """Why `output`, a pass's `DedupOutput` for `graph`, is wrong or not known right (a run
    against the original on the example inputs, then the checker's obligations, DIF-4,
    DIF-27), or "" when it is right."""
    held = dedup_output(output, graph.gm.graph)
    judged = judge_transformation(graph.gm, held.transformed, graph.example_inputs,
                                  held.extra_deps)  # fmt: skip
    return "" if judged.right else f"{judged.verdict}: {judged.reason}"


@dataclass(frozen=True, slots=True)
class PassDiff:
    """One model diffed against the reference: the `GraphDiff` (its divergences per
    component), whether a side is blamed, and the report's text."""

    diff: GraphDiff
    fails: bool
    text: str


def diff_pass(pass_: object, model_path: str | Path, component: str = "all") -> PassDiff:
    """`fxoracle diff MODEL --against PASS --component COMPONENT`, in this process."""
    sides = _sides(pass_, component)
    found = diff_model(load_model_file(model_path), sides)
    report = DiffReport(sides.label, sides.components, skipped_components(sides, component),
                        (found,))  # fmt: skip
    return PassDiff(found, report.fails, render_text(report))


def assert_agrees(pass_: object, model_path: str | Path, component: str = "all") -> None:
    """Fail (`AssertionError`, the diff's text as its message) unless the reference and
    `pass_` agree on the model file: no side blamed, free choices allowed (DIF-24)."""
    found = diff_pass(pass_, model_path, component)
    assert not found.fails, found.text


def _sides(pass_: object, component: str) -> Sides:
    if isinstance(pass_, str):
        return make_sides(pass_, component)
    return sides_for(pass_, component)
