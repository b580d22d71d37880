"""`fxoracle diff --workers N`: several models diffed on N processes (spec chapter 08, DIF-14).

A model is named by a `ModelRef` that a worker loads by itself (a model file's path, or random
model (seed, index)); each worker builds the sides from the same arguments, diffs the model with
`diff.diff_model` (writing its repros there) and sends back its `GraphDiff`. The diffs are put
back in the order the models were given, so the report is the one `--workers 1` gives. The pool
is the campaign's (`campaign_pool.process_pool`: spawned processes, one thread each, terminated
on Ctrl-C); an error that would stop a diff in one process (a model file that does not load, a
model neither side can capture) stops it here too, with the same exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, as_completed
from dataclasses import dataclass
from pathlib import Path

from checker.io.model_file import Model, load_model_file
from checker.oracle.campaign_pool import process_pool
from checker.oracle.diff import (
    DiffReport,
    GraphDiff,
    Progress,
    diff_model,
    make_sides,
    skipped_components,
)
from checker.oracle.randmodels import random_model
from reference.errors import FxOracleError


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A model file (`path`), or else random model (`seed`, `index`)."""

    path: str | None = None
    seed: int = 0
    index: int = 0

    def load(self) -> Model:
        return load_model_file(self.path) if self.path else random_model(self.seed, self.index)


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
    return [ModelRef(p) for p in paths] + [ModelRef(None, seed, i) for i in range(random)]


def diff_ref(ref: ModelRef, args: DiffArgs) -> GraphDiff:
    """A worker's task: load one model and diff it."""
    sides = make_sides(args.against, args.component, strict_order=args.strict_order)
    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    return diff_model(ref.load(), sides, repro_dir)


def run_diff_pool(
    refs: Sequence[ModelRef], args: DiffArgs, workers: int, progress: Progress | None = None
) -> DiffReport:
    """`diff.run_diff` on `workers` processes; the same report, in the same order."""
    if workers < 2:
        raise FxOracleError("diff: a pool needs --workers 2 or more (1: this process)")
    if not refs:
        raise FxOracleError("nothing to compare: give model files or --random N")
    sides = make_sides(args.against, args.component, strict_order=args.strict_order)
    with process_pool(min(workers, len(refs))) as pool:
        futures = [pool.submit(diff_ref, ref, args) for ref in refs]
        _report_progress(futures, progress)
        graphs = tuple(f.result() for f in futures)
    skipped = skipped_components(sides, args.component)
    return DiffReport(sides.label, sides.components, skipped, graphs)


def _report_progress(futures: Sequence[Future[GraphDiff]], progress: Progress | None) -> None:
    """Wait for every diff, telling `progress` of each as it completes."""
    for done in as_completed(futures):
        if progress is not None and done.exception() is None:
            progress(done.result(), len(futures))
