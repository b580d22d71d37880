"""`fxoracle fuzz --minutes M --seed S --out PATH`: a differential campaign on random models
(spec chapter 08, DIF-9, DIF-13).

Models come from `checker.oracle.campaign.randmodels` (seed S, index 0, 1, ...), built in memory,
and are diffed with every component, the hostile split policies included (`diff_random`).
Divergences are grouped by signature (component, kind, blamed side, case); the first model of
each signature, by index, is kept with its source and, with `--repro-dir`, a minimized repro.
The findings file is rewritten (atomically) after every change, so an interrupted campaign keeps
what it found; run again with the same file, seed and side, it goes on from its next model, and
any other file there is refused (DIF-16). Nothing a model does stops the campaign: an exception
of the oracle itself is recorded as a finding of its own (`oracle-error`), which is a bug to
fix; so is a divergence blamed on the reference. Either makes the exit status 1.

The work is two tasks, `diff_task` (one model) and `repro_task` (one new signature), run here,
on a process pool or on a Ray cluster (`checker.oracle.pool.pool`), at most a window of models
at a time. Outcomes are recorded in index order: one that completes early waits for its
predecessors, so a campaign records a prefix 0..k-1 of the models, and a prefix gives the same
findings however many workers diffed it. A new signature's repro is asked for when its model is
recorded, so in index order too; this process writes it. At the deadline the queued models are
cancelled and the running ones waited for; the repros asked for are always finished.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, TypeVar

import torch

from checker.io.locks import exclusive
from checker.io.reports import to_json, write_atomically
from checker.oracle.campaign.findings import Campaign, Progress, continued
from checker.oracle.campaign.tasks import (
    Outcome,
    ReproFile,
    diff_task,
    oracle_error,
    repro_task,
    sides_for,
)
from checker.oracle.pool.bar import Bar
from checker.oracle.pool.interrupts import interrupts_noted
from checker.oracle.pool.pool import Pool, Where, where
from reference.errors import FxOracleError

T = TypeVar("T")


def run_campaign(
    minutes: float,
    seed: int,
    out: Path,
    *,
    against: str = "torch",
    repro_dir: Path | None = None,
    max_models: int | None = None,
    progress: Progress | None = None,
    workers: int | None = 1,
    ray: str | None = None,
    device: torch.device | None = None,
) -> Campaign:
    """Diff random models until `minutes` pass (or `max_models` are done in all), writing
    `out`; a campaign `out` holds already is continued from its next model (DIF-16).
    `workers`: processes (1: this one; None: every core, or with `ray` the cluster's CPUs);
    `ray`: a Ray cluster's address, or `local` (DIF-13); `device`: where the models run
    (`cuda:0`; default: the CPU, where they are made; FIL-8)."""
    if workers is not None and workers < 1:
        raise FxOracleError("fxoracle fuzz: --workers must be at least 1")
    with exclusive(out, "fxoracle fuzz"):  # one writer: no finding lost (FIL-13)
        return _run_locked(minutes, seed, out, against, repro_dir, max_models, progress,
                           workers, ray, device)  # fmt: skip


def _run_locked(
    minutes: float,
    seed: int,
    out: Path,
    against: str,
    repro_dir: Path | None,
    max_models: int | None,
    progress: Progress | None,
    workers: int | None,
    ray: str | None,
    device: torch.device | None,
) -> Campaign:
    campaign = continued(out, seed, against, sides_for(against).label, str(device or "cpu"))
    deadline = campaign.started + 60.0 * minutes
    plan = Plan(seed, against, out, repro_dir, max_models, deadline, device)
    with where(workers, ray) as place, interrupts_noted() as interrupted:
        try:
            write_atomically(plan.out, to_json(campaign.to_json()))
            _drive(place, plan, campaign, progress, interrupted)
        finally:
            if progress is not None:
                progress(campaign, True)
    return campaign


@dataclass(frozen=True, slots=True)
class Plan:
    """A campaign's models (`seed`, 0, 1, ...), against what, where it writes, and when it
    stops: after `max_models`, or at `deadline` (a `time.monotonic()` instant)."""

    seed: int
    against: str
    out: Path
    repro_dir: Path | None
    max_models: int | None
    deadline: float
    device: torch.device | None = None  # `--device` (FIL-8)

    def wants(self, index: int) -> bool:
        """Model `index` is to be diffed: below `max_models` and before the deadline."""
        return (self.max_models is None or index < self.max_models) and not self.over()

    def over(self) -> bool:
        return time.monotonic() >= self.deadline


@dataclass(slots=True)
class _Flight:
    """The tasks of one run still in flight: diffs by model index, and repros."""

    diffs: Pool[Outcome]
    repros: set[Future[ReproFile | None]] = field(default_factory=set)
    submitted: int = 0  # models submitted so far: the next index


def _drive(
    place: Where,
    plan: Plan,
    campaign: Campaign,
    progress: Progress | None,
    interrupted: threading.Event,
) -> None:
    diffs = Pool[Outcome](place.executor, place.steals)
    flight = _Flight(diffs, submitted=campaign.models)  # a continued campaign goes on from there
    _top_up(place, plan, flight)
    while flight.diffs.futures or flight.repros:
        if interrupted.is_set():  # a Ctrl-C that a model's diff swallowed
            raise KeyboardInterrupt
        if plan.over() or flight.diffs.steal() is None:
            _wait(flight, plan)
        recorded = _record_ready(place, plan, campaign, flight)
        if _keep_repros(plan, campaign, flight) or recorded:
            write_atomically(plan.out, to_json(campaign.to_json()))
        if recorded and progress is not None:
            progress(campaign, False)
        _top_up(place, plan, flight)


def _top_up(place: Where, plan: Plan, flight: _Flight) -> None:
    while len(flight.diffs.futures) < place.window and plan.wants(flight.submitted):
        index = flight.submitted
        flight.diffs.submit(index, diff_task, plan.seed, index, plan.against, plan.device)
        flight.submitted += 1


def _wait(flight: _Flight, plan: Plan) -> None:
    """Until a task ends (a completion after the wait sets `done` again, one before it is
    seen as `future.done()`); at the deadline, cancel the queued models (those running finish:
    a cancelled model ends the recorded prefix)."""
    left = plan.deadline - time.monotonic()
    flight.diffs.done.wait(left if left > 0 else None)
    flight.diffs.done.clear()
    if plan.over():
        for future in flight.diffs.futures.values():
            future.cancel()


def _record_ready(place: Where, plan: Plan, campaign: Campaign, flight: _Flight) -> bool:
    """Record the done outcomes that come next by index; ask for their new signatures'
    repros. True when a model was recorded."""
    recorded = False
    while (future := flight.diffs.futures.get(campaign.models)) is not None and future.done():
        if future.cancelled():  # the deadline: no later model is recorded either
            for index in list(flight.diffs.futures):
                flight.diffs.pop(index)
            break
        flight.diffs.pop(campaign.models)
        fail = _oracle_error(plan, campaign)
        for index, d in campaign.record(_result(future, fail)):
            if plan.repro_dir is not None:
                task = place.executor.submit(
                    repro_task, plan.seed, index, d, plan.against, plan.device
                )
                task.add_done_callback(lambda _: flight.diffs.done.set())
                flight.repros.add(task)
        recorded = True
    return recorded


def _oracle_error(plan: Plan, campaign: Campaign) -> Callable[[Exception], Outcome]:
    index, label = campaign.models, campaign.against
    return lambda e: oracle_error(plan.seed, index, e, label)


def _keep_repros(plan: Plan, campaign: Campaign, flight: _Flight) -> bool:
    """Write the repros done so far. True when one was done."""
    done = {f for f in flight.repros if f.done()}
    flight.repros -= done
    for future in done:
        repro = _result(future, lambda e: None)  # best effort, as in this process
        if repro is not None and plan.repro_dir is not None:
            campaign.keep_repro(repro, plan.repro_dir)
    return bool(done)


def _result(future: Future[T], otherwise: Callable[[Exception], T]) -> T:
    """A task's result, or `otherwise(e)` when the task raised `e` (DIF-9: nothing a model
    does stops the campaign); a dead pool does stop it."""
    try:
        return future.result()
    except BrokenExecutor:
        raise
    except Exception as e:
        return otherwise(e)


class CampaignBar(Bar):
    """The campaign's `Progress`: models recorded (of `--max-models` when given), `findings=`
    (signatures so far) and `fxoracle_bugs=` (those that are fxoracle's own); the summary line
    comes last, bar or not."""

    def __init__(
        self, total: int | None, out: TextIO | None = None, enabled: bool | None = None
    ) -> None:
        super().__init__("fuzz", out, enabled)
        self.start(total)

    def __call__(self, campaign: Campaign, final: bool) -> None:
        bugs = len(campaign.fxoracle_bugs)
        self.show(campaign.models, f"findings={len(campaign.findings)}, fxoracle_bugs={bugs}")
        if final:
            self.close()
            print(campaign.progress(), file=self.out, flush=True)
