"""`fxoracle diff`: the driver (spec chapter 08, DIF).

`run_diff(models, against, ...)` loads the sides (`checker.oracle.sides`), captures each model
once and compares every component of both sides on copies of that capture
(`checker.oracle.compare`: for every divergence, which side is wrong, and which of torch's known
bugs it is), then, with `repro_dir`, shrinks each blamed divergence kind of each component into
a standalone repro (`checker.oracle.repro`). Nothing raised inside a side stops the diff: it is
judged like a wrong output; an exception of the oracle itself becomes an `oracle-error`
divergence (a bug of fxoracle, DIF-9). The report is `checker.oracle.diff.report`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import TextIO

import torch

from checker.io.device import device_of, on_device
from checker.io.model_file import Model
from checker.io.supervise import doing
from checker.oracle.campaign.randmodels import random_model
from checker.oracle.compare.divergence import Divergence
from checker.oracle.compare.known_bugs import classified
from checker.oracle.compare.run import capture_for, diff_capture, model_caches_dropped
from checker.oracle.diff.report import DiffReport, GraphDiff
from checker.oracle.pool.bar import Bar
from checker.oracle.pool.interrupts import interrupts_noted
from checker.oracle.repro.prover import Prover
from checker.oracle.repro.write import not_captured, write_repros
from checker.oracle.sides.sides import Sides, make_sides, skipped_components
from reference.errors import FxOracleError

Progress = Callable[[GraphDiff, int], None]  # (the model just diffed, how many in all)


def run_diff(
    models: Sequence[Model],
    against: str,
    component: str = "all",
    random: int = 0,
    seed: int = 0,
    repro_dir: Path | None = None,
    progress: Progress | None = None,
    *,
    strict_order: bool = False,
    device: torch.device | None = None,
) -> DiffReport:
    """Diff every model of `models` and `random` generated ones (DIF-1..DIF-12), each moved to
    `device` first (default: where its inputs live, FIL-8)."""
    if not models and random <= 0:
        raise FxOracleError("nothing to compare: give model files or --random N")
    sides = make_sides(against, component, strict_order=strict_order)
    made = (random_model(seed, i) for i in range(random))
    everything = [on_device(m, device) for m in (*models, *made)]
    graphs = []
    # one prover for the run: its interpreter imports torch once for every repro (DIF-15)
    with interrupts_noted() as interrupted, closing(Prover()) as prover:
        for model in everything:  # a Ctrl-C torch swallowed still stops the diff
            graphs.append(diff_model(model, sides, repro_dir, prover, device=device))
            if interrupted.is_set():
                raise KeyboardInterrupt
            if progress is not None:
                progress(graphs[-1], len(everything))
    return DiffReport(sides.label, sides.components, skipped_components(sides, component),
                      tuple(graphs))  # fmt: skip


def diff_model(
    model: Model, sides: Sides, repro_dir: Path | None = None, prover: Prover | None = None,
    *, device: torch.device | None = None,
) -> GraphDiff:  # fmt: skip
    """All chosen components on one model, then a repro per blamed divergence kind, proved by
    `prover` (or one of its own); `device` is the `--device` it was moved to, which its repros
    move it to too (FIL-16)."""
    doing(f"diffing {model.name}")  # a crash in it is blamed on it (FIL-11)
    with model_caches_dropped():
        return _diff_model(model, sides, repro_dir, prover, device)


def _diff_model(
    model: Model, sides: Sides, repro_dir: Path | None, prover: Prover | None,
    device: torch.device | None,
) -> GraphDiff:  # fmt: skip
    graph = capture_for(model, sides)
    if isinstance(graph, Divergence):
        found: tuple[Divergence, ...] = classified((graph,))
    else:
        found = classified(diff_capture(graph, sides))
    where = device_of(model.example_inputs)
    if repro_dir is None or not found:
        return GraphDiff(model.name, found, device=where)
    if isinstance(graph, Divergence):
        made = not_captured(found)
    else:
        made = write_repros(model, graph, found, sides, repro_dir, prover=prover, device=device)
    written = tuple(str(p) for p in made.written)
    return GraphDiff(model.name, found, written, device=where, no_repros=made.missing)


class DiffBar(Bar):
    """The diff's `Progress`: models diffed, the model just done and its own outcome (`agree`,
    `diverge`, or `fail`: a side is blamed or fxoracle failed), then the running totals: `so far
    diverge=` (models that do not agree: a difference other than a free choice, DIF-24) and
    `fail=` (those of them that fail, whatever `--fail-on` makes of them). With several workers
    models finish out of order, so each line says its own model's outcome apart from the
    totals."""

    def __init__(self, out: TextIO | None = None, enabled: bool | None = None) -> None:
        super().__init__("diff", out, enabled, leave=False)
        self._done = self._diverge = self._fail = 0

    def __call__(self, done: GraphDiff, total: int) -> None:
        self._done += 1
        self._diverge += not done.agree
        self._fail += done.fails
        own = "fail" if done.fails else "agree" if done.agree else "diverge"
        postfix = f"{done.graph} {own} (so far diverge={self._diverge} fail={self._fail})"
        self.show(self._done, postfix, total)
