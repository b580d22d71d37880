"""`fxoracle bench --size`, part one: what the reference's pass reaches (issue 33, "Acceptance").

The bundled example is captured through Dynamo; then, on the plain path (`fast=False` wherever
an entry point takes it; the report names those that did), `track_graph` keys the captured graph
and `deduplicate` outlines it, each under `sys.setprofile`. A function is reached when one of
its frames starts in a file under `reference/`; comprehensions, generator expressions and
lambdas run as frames of their own but count as part of the function they are written in
(`function_of`); nested `def`s count on their own, module bodies (a lazy import) not at all.
Calls into torch and the standard library are not counted. The limits are the issue's:
`deduplicate` reaches at most 60 functions in 10 files.

What torch lacks is told apart by the call, not by the file: a function counts as the rest
(`Reach.rest`) when at least one of its calls has no frame of an `apart` module (size's
`LACKS`) on the stack, itself included. So a helper of `fx_helpers.py` that only the alias DB
calls counts with the alias DB.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import reference
from checker.io.model_file import load_model_file
from reference.dynamo.capture import capture
from reference.pipeline import deduplicate
from reference.track.offline import track_graph

FUNCTIONS_MAX, FILES_MAX = 60, 10
ANONYMOUS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>", "<lambda>"})
ROOT = Path(reference.__file__).parent
Reached = frozenset[tuple[str, str]]  # (file relative to reference/, function's qualified name)


def function_of(qualname: str) -> str:
    """The function a frame's code belongs to: anonymous parts (a comprehension, a generator
    expression, a lambda, each with its `<locals>`) folded into the function around them."""
    parts = qualname.split(".")
    while len(parts) > 1 and parts[-1] in ANONYMOUS:
        parts = parts[:-2] if parts[-2] == "<locals>" else parts[:-1]
    return ".".join(parts)


@dataclass(frozen=True, slots=True)
class Reach:
    """The functions of `reference/` that one call reached."""

    name: str
    functions: Reached
    rest: Reached  # those reached by a call made on no `apart` module's behalf

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(sorted({f for f, _ in self.functions}))

    def by_file(self) -> dict[str, list[str]]:
        return {f: sorted(q for g, q in self.functions if g == f) for f in self.files}


def reached(
    call: Callable[[], object], root: Path = ROOT, apart: tuple[str, ...] = ()
) -> tuple[Reached, Reached]:
    """The (file, function) pairs under `root` whose frames `call()` started, then those of them
    started at least once with no frame of a file under `root` starting with one of `apart`
    (paths relative to `root`) on the stack."""
    prefix = str(root) + "/"
    seen: set[tuple[str, str]] = set()
    rest: set[tuple[str, str]] = set()

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(prefix) or code.co_name == "<module>":
            return
        found = (code.co_filename[len(prefix) :], function_of(code.co_qualname))
        seen.add(found)
        if found not in rest and not _on_behalf_of(frame, prefix, apart):
            rest.add(found)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return frozenset(seen), frozenset(rest)


def _on_behalf_of(frame: FrameType | None, prefix: str, apart: tuple[str, ...]) -> bool:
    """Whether `frame` or a frame below it runs a file `prefix + one of apart`."""
    modules = tuple(prefix + a for a in apart)
    while frame is not None:
        if modules and frame.f_code.co_filename.startswith(modules):
            return True
        frame = frame.f_back
    return False


def plain(function: Callable[..., object]) -> Mapping[str, Any]:
    """`{"fast": False}` when `function` takes the switch, else nothing: the plain path."""
    return {"fast": False} if "fast" in inspect.signature(function).parameters else {}


@dataclass(frozen=True, slots=True)
class ReachReport:
    """Reach of keying, of `deduplicate` given its tracker, and of both, on one example."""

    example: str
    track: Reach
    dedup: Reach
    plain: tuple[str, ...]  # the entry points given `fast=False` (the rest took their default)

    @property
    def both(self) -> Reach:
        t, d = self.track, self.dedup
        return Reach("track_graph + deduplicate", t.functions | d.functions, t.rest | d.rest)

    @property
    def ok(self) -> bool:
        d = self.dedup
        return len(d.functions) <= FUNCTIONS_MAX and len(d.files) <= FILES_MAX


def measure(example: Path, shown: str, apart: tuple[str, ...] = ()) -> ReachReport:
    """Capture `example`, then key and deduplicate its graph on the plain path, profiled;
    `apart`: the modules of what torch lacks, relative to `reference/`."""
    model = load_model_file(example)
    gm = capture(model.model, model.example_inputs, model.dynamic).gm
    trackers: list[Any] = []

    def key() -> None:
        trackers.append(track_graph(gm.graph, **plain(track_graph)))

    track = reached(key, apart=apart)
    dedup = reached(lambda: deduplicate(gm, trackers[0], **plain(deduplicate)), apart=apart)
    switched = tuple(f.__name__ for f in (track_graph, deduplicate) if plain(f))
    return ReachReport(shown, Reach("track_graph", *track), Reach("deduplicate", *dedup), switched)


def render(report: ReachReport) -> list[str]:
    """The report as text lines: one per call, then `deduplicate`'s files and the verdicts."""
    given = ", ".join(report.plain) or "none (each took its default path)"
    lines = [f"reach on {report.example}: functions of reference/ started (sys.setprofile; "
             "comprehensions, generator expressions and lambdas count as the function they are "
             f"in); given fast=False: {given}"]  # fmt: skip
    for r in (report.track, report.dedup, report.both):
        lines.append(f"  {r.name:<26} {len(r.functions):4d} functions in {len(r.files):3d} files")
    lines += [f"    {len(fs):4d}  {f}" for f, fs in report.dedup.by_file().items()]
    n, files = len(report.dedup.functions), len(report.dedup.files)
    lines.append(f"{_verdict(n <= FUNCTIONS_MAX)}  deduplicate reaches <= {FUNCTIONS_MAX} "
                 f"functions: {n}")  # fmt: skip
    lines.append(
        f"{_verdict(files <= FILES_MAX)}  deduplicate reaches <= {FILES_MAX} files: {files}"
    )
    return lines


def to_json(report: ReachReport) -> dict[str, object]:
    runs = [report.track, report.dedup, report.both]
    return {
        "example": report.example,
        "fast_false_given_to": list(report.plain),
        "runs": [_run_json(r) for r in runs],
        "limits": {"call": "deduplicate", "functions": FUNCTIONS_MAX, "files": FILES_MAX},
        "verdict": _verdict(report.ok),
    }


def _run_json(r: Reach) -> dict[str, object]:
    return {"name": r.name, "functions": len(r.functions), "files": len(r.files),
            "by_file": r.by_file()}  # fmt: skip


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"
