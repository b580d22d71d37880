"""`fxoracle diff --workers N`: several models diffed on N processes (spec chapter 08, DIF-14).

A model is named by a `ModelRef` that a worker loads by itself (a model file's path, or random
model (seed, index)); each worker builds the sides from the same arguments, diffs the model with
`driver.diff_model` (writing its repros there) and sends back its `GraphDiff`. The diffs are put
back in the order the models were given, so the report is the one `--workers 1` gives. The pool
is the campaign's (`checker.oracle.pool.pool`: spawned processes, terminated on Ctrl-C), one
process fewer than `--workers`: this process steals the models still queued, as the campaign's
does, so the pool's start-up is not waited for. An error that would stop a diff
in one process (a model file that does not load, a model neither side can capture) stops it
here too, with the same exception.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import BrokenExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import torch

from checker.io.device import on_device
from checker.io.model_file import Model, load_model_file, model_names
from checker.io.user_code import existing
from checker.oracle.campaign.randmodels import random_model
from checker.oracle.diff.driver import Progress, diff_model
from checker.oracle.diff.report import DiffReport, GraphDiff
from checker.oracle.pool.interrupts import interrupts_noted
from checker.oracle.pool.pool import Pool, process_pool
from checker.oracle.sides.sides import make_sides, skipped_components
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
    device: torch.device | None = None  # `--device` (FIL-8); None: where the inputs live


def isolates(device: torch.device | None, models: int) -> bool:
    """DIF-33: whether a diff runs each model in a fresh process of its own: more than one model
    on CUDA, where a kernel's device-side assert ends CUDA for the rest of its process."""
    return device is not None and device.type == "cuda" and models > 1


def model_refs(paths: Sequence[str], random: int, seed: int) -> list[ModelRef]:
    """The files, then `random` generated models; a path that is no file is bad input now,
    before any worker starts."""
    for p in paths:
        existing(p)
    files = [ModelRef(p, name=n) for p, n in zip(paths, model_names(paths), strict=True)]
    return files + [ModelRef(None, seed, i) for i in range(random)]


def diff_ref(ref: ModelRef, args: DiffArgs) -> GraphDiff:
    """A worker's task: load one model and diff it."""
    sides = make_sides(args.against, args.component, strict_order=args.strict_order)
    repro_dir = Path(args.repro_dir) if args.repro_dir else None
    return diff_model(on_device(ref.load(), args.device), sides, repro_dir, device=args.device)


def run_diff_pool(
    refs: Sequence[ModelRef],
    args: DiffArgs,
    workers: int,
    progress: Progress | None = None,
    *,
    isolated: bool = False,
) -> DiffReport:
    """`driver.run_diff` on `workers` processes, this one among them; the same report, in the
    same order. `isolated` (DIF-33): each model in a fresh process of its own, `workers` at a
    time, none in this one."""
    if workers < (1 if isolated else 2):
        raise FxOracleError("diff: a pool needs --workers 2 or more (1: this process)")
    if not refs:
        raise FxOracleError("nothing to compare: give model files or --random N")
    sides = make_sides(args.against, args.component, strict_order=args.strict_order)
    helpers = min(workers, len(refs)) - (0 if isolated else 1)
    with (
        process_pool(max(helpers, 1), fresh_each=isolated) as executor,
        interrupts_noted() as interrupted,
    ):
        pool = Pool[GraphDiff](executor, steals=not isolated)
        for k, ref in enumerate(refs):
            pool.submit(k, diff_ref, ref, args)
        try:
            here = _diff_here_while_queued(pool, progress, interrupted)
            _report_progress(pool, progress, told=here)
            graphs = tuple(pool.futures[k].result() for k in range(len(refs)))
        except BrokenExecutor as e:  # a model killed its worker (a segfault): FIL-11
            raise FxOracleError(_died(refs, pool)) from e
    skipped = skipped_components(sides, args.component)
    return DiffReport(sides.label, sides.components, skipped, graphs)


def _died(refs: Sequence[ModelRef], pool: Pool[GraphDiff]) -> str:
    """Which models a dead worker may have been diffing: those its death left unfinished."""
    lost = [k for k, f in sorted(pool.futures.items()) if f.done() and f.exception() is not None
            and isinstance(f.exception(), BrokenExecutor)]  # fmt: skip
    names = [refs[k].name or refs[k].path or f"random model {refs[k].index}" for k in lost]
    which = names[0] if len(names) == 1 else f"one of {', '.join(names[:5]) or 'the models'}"
    return f"a worker process died (a crash in user code?) while diffing {which}"


def _diff_here_while_queued(
    pool: Pool[GraphDiff], progress: Progress | None, interrupted: threading.Event
) -> set[int]:
    """This process is the last worker: it diffs the first model still queued on the pool
    (not yet handed to a process) until none is left, above all while the pool's processes
    start and import torch (DIF-14). Returns the indices it diffed."""
    here: set[int] = set()
    while (k := pool.steal()) is not None:
        here.add(k)
        if progress is not None and pool.futures[k].exception() is None:
            progress(pool.futures[k].result(), len(pool.futures))
        if interrupted.is_set():  # a Ctrl-C that a model's diff swallowed
            raise KeyboardInterrupt
    return here


def _report_progress(pool: Pool[GraphDiff], progress: Progress | None, told: set[int]) -> None:
    """Wait for every diff, telling `progress` of each as it completes (but those in `told`)."""
    futures = pool.futures
    for done in as_completed([f for k, f in futures.items() if k not in told]):
        if progress is not None and done.exception() is None:
            progress(done.result(), len(futures))
