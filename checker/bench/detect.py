"""`fxoracle bench`, part four: how long `diff --random` takes to blame each planted bug (spec
chapter 08, DIF-29).

Each single-bug plug-in of `checker.oracle.plugins.planted` (the nine planted bugs: `Planted`'s
three one at a time, then the six others) is diffed against the reference on random models of
each seed in the order a campaign draws them, on two workers (this process and one spawned,
whose start-up, torch's import included, is counted), every component it implements, no
repros. The clock runs from the call to the report of the first model that blames the plug-in;
the diff stops there. The number of models reported by then is the figure that does not depend
on the machine's load. A measurement: `fxoracle bench` exits 0 whatever it says.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from checker.oracle.diff.report import GraphDiff
from checker.oracle.diff.workers import DiffArgs, model_refs, run_diff_pool

PLANTED = (
    "MergesConstants", "DropsWrites", "SortIgnoresDeps", "IgnoresViews", "SkipsAliasing",
    "OutputsPerRegion", "WritesInputs", "ReordersDraws", "LazyPlaceholders",
)  # fmt: skip
SEEDS = (0, 1, 2)
TARGET_S = 10.0  # issue 30: each planted bug blamed within 10 s of `--random` on 2 cores
MODELS = 40  # at most this many random models per plug-in


@dataclass(frozen=True, slots=True)
class Detection:
    """When a planted bug was first blamed on random models of `seed`: `seconds` after the diff
    started, on `model` (the `models`-th reported); `model` empty when none of them blamed it."""

    plugin: str
    seed: int
    seconds: float
    models: int
    model: str = ""


class _Found(Exception):
    """Raised by the progress callback to stop the diff at the first blamed model."""

    def __init__(self, done: GraphDiff, count: int) -> None:
        super().__init__(done.graph)
        self.done, self.count = done, count


def detect(plugin: str, seed: int = 0, models: int = MODELS, workers: int = 2) -> Detection:
    """The time `diff --random models --seed seed --workers workers` takes to blame `plugin`."""
    against = f"checker.oracle.plugins.planted:{plugin}"
    reported: list[GraphDiff] = []

    def progress(done: GraphDiff, total: int) -> None:
        reported.append(done)
        if done.fails:
            raise _Found(done, len(reported))

    start = time.monotonic()
    try:
        run_diff_pool(model_refs([], models, seed), DiffArgs(against), workers, progress)
    except _Found as found:
        return Detection(plugin, seed, time.monotonic() - start, found.count, found.done.graph)
    return Detection(plugin, seed, time.monotonic() - start, len(reported))


def run(
    seeds: tuple[int, ...] = SEEDS, plugins: tuple[str, ...] = PLANTED, models: int = MODELS
) -> str:
    """Each planted bug's time to detect on each seed, as a table, and the verdict against
    `TARGET_S`."""
    rows = [detect(p, seed, models) for seed in seeds for p in plugins]
    lines = [f"{'planted bug':<18} {'seed':>4} {'models':>7} {'seconds':>8}  first blamed on"]
    for r in rows:
        where = r.model or f"none of {r.models} models"
        lines.append(f"{r.plugin:<18} {r.seed:>4} {r.models:>7} {r.seconds:>8.1f}  {where}")
    late = [f"{r.plugin} (seed {r.seed})" for r in rows if not r.model or r.seconds > TARGET_S]
    verdict = "PASS" if not late else "FAIL"
    slow = f"; late: {', '.join(late)}" if late else ""
    worst = max((r.models for r in rows if r.model), default=0)
    lines.append(f"{verdict}  every planted bug blamed within {TARGET_S:g} s of --random on "
                 f"2 workers (seeds {', '.join(map(str, seeds))}; at most {worst} models)"
                 f"{slow}")  # fmt: skip
    return "\n".join(lines) + "\n"
