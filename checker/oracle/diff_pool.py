"""`fxoracle diff --workers N`: several models diffed on N processes (spec chapter 08, DIF-14).

A model is named by a `ModelRef` that a worker loads by itself (a model file's path, or random
model (seed, index)); each worker builds the sides from the same arguments, diffs the model with
`diff.diff_model` (writing its repros there) and sends back its `GraphDiff`. The diffs are put
back in the order the models were given, so the report is the one `--workers 1` gives. The pool
is the campaign's (`campaign_pool.process_pool`: spawned processes, one thread each, terminated
on Ctrl-C), one process fewer than `--workers`: this process diffs the models still queued, as
the campaign's does, so the pool's start-up is not waited for. An error that would stop a diff
in one process (a model file that does not load, a model neither side can capture) stops it
here too, with the same exception.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, as_completed
from dataclasses import dataclass
from pathlib import Path

from checker.io.model_file import Model, load_model_file, model_names
from checker.oracle.campaign_pool import InProcess, process_pool
from checker.oracle.diff import (
    DiffReport,
    GraphDiff,
    Progress,
    diff_model,
    make_sides,
    skipped_components,
)
from checker.oracle.interrupts import interrupts_noted
from checker.oracle.randmodels import random_model
from reference.errors import FxOracleError


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A model file (`path`, reported as `name`), or else random model (`seed`, `index`)."""

    path: str | None = None
    seed: int = 0
    index: int = 0
    name: str | None = None

    def load(self) -> Model:
        if self.path:
            return load_model_file(self.path, self.name)
        return random_model(self.seed, self.index)


@dataclass(frozen=True, slots=True)
class DiffArgs:
    """What every worker builds its sides and repros from (all of it pickles)."""

    against: str
    component: str = "all"
    strict_order: bool = False
    repro_dir: str | None = None


def model_refs(paths: Sequence[str], random: int, seed: int) -> list[ModelRef]:
    """The files, then `random` generated models; a path that is no file is bad input now,
    before any worker starts."""
    for p in paths:
        if not Path(p).is_file():
            raise FxOracleError(f"{p}: no such file")
    files = [ModelRef(p, name=n) for p, n in zip(paths, model_names(paths), strict=True)]
    return files + [ModelRef(None, seed, i) for i in range(random)]


def diff_ref(ref: ModelRef, args: DiffArgs) -> GraphDiff:
    """A worker's task: load one model and diff it."""
    sides = make_sides(args.against, args.component, strict_order=args.strict_order)
    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    return diff_model(ref.load(), sides, repro_dir)


def run_diff_pool(
    refs: Sequence[ModelRef], args: DiffArgs, workers: int, progress: Progress | None = None
) -> DiffReport:
    """`diff.run_diff` on `workers` processes, this one among them; the same report, in the
    same order."""
    if workers < 2:
        raise FxOracleError("diff: a pool needs --workers 2 or more (1: this process)")
    if not refs:
        raise FxOracleError("nothing to compare: give model files or --random N")
    sides = make_sides(args.against, args.component, strict_order=args.strict_order)
    helpers = min(workers, len(refs)) - 1
    with process_pool(max(helpers, 1)) as pool, interrupts_noted() as interrupted:
        futures = [pool.submit(diff_ref, ref, args) for ref in refs]
        here = _diff_here_while_queued(futures, refs, args, progress, interrupted)
        _report_progress(futures, progress, told=here)
        graphs = tuple(f.result() for f in futures)
    skipped = skipped_components(sides, args.component)
    return DiffReport(sides.label, sides.components, skipped, graphs)


def _diff_here_while_queued(
    futures: list[Future[GraphDiff]],
    refs: Sequence[ModelRef],
    args: DiffArgs,
    progress: Progress | None,
    interrupted: threading.Event,
) -> set[int]:
    """This process is the last worker: it diffs the first model still queued on the pool
    (not yet handed to a process) until none is left, above all while the pool's processes
    start and import torch (DIF-14). Returns the indices it diffed."""
    here: set[int] = set()
    for k, future in enumerate(futures):
        if future.done() or not future.cancel():  # done, or running on the pool
            continue
        futures[k] = InProcess().submit(diff_ref, refs[k], args)
        here.add(k)
        if progress is not None and futures[k].exception() is None:
            progress(futures[k].result(), len(futures))
        if interrupted.is_set():  # a Ctrl-C that a model's diff swallowed
            raise KeyboardInterrupt
    return here


def _report_progress(
    futures: Sequence[Future[GraphDiff]], progress: Progress | None, told: set[int]
) -> None:
    """Wait for every diff, telling `progress` of each as it completes (but those in `told`)."""
    for done in as_completed([f for k, f in enumerate(futures) if k not in told]):
        if progress is not None and done.exception() is None:
            progress(done.result(), len(futures))
