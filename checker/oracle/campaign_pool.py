"""Where a campaign's models are diffed: here, on a pool of processes or on a Ray cluster, and
recorded in index order either way (spec chapter 08, DIF-9, DIF-13).

A model's diff is a task (`fuzz.diff_task`) submitted to an `Executor`, at most `window` at a
time. Outcomes are recorded in index order: one that completes early waits for its
predecessors, so a campaign records a prefix 0..k-1 of the models, and a prefix gives the same
findings however many workers diffed it. A new signature's repro is a task of its own
(`fuzz.repro_task`), asked for when its model is recorded, so in index order too; this process
writes it. At the deadline the queued models are cancelled and the running ones waited for;
the repros asked for are always finished. The findings file is rewritten after every change.

Pool workers are spawned (not forked: torch runs threads), use one thread each and ignore
Ctrl-C: the main process handles it by terminating them, and the file keeps what was recorded.
However the main process ends, `kill -9` included, its workers end with it (DIF-17).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor, Executor, Future
from concurrent.futures.process import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec, TypeVar

from checker.io.reports import to_json, write_atomically
from checker.oracle.cluster import ray_executor
from checker.oracle.findings import Campaign, Progress
from checker.oracle.fuzz_tasks import (
    Outcome,
    ReproFile,
    diff_task,
    oracle_error,
    prepare_worker,
    quiet_now,
    repro_task,
)
from checker.oracle.interrupts import interrupts_noted
from checker.oracle.parent_watch import die_with_parent

P = ParamSpec("P")
T = TypeVar("T")


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

    def wants(self, index: int) -> bool:
        """Model `index` is to be diffed: below `max_models` and before the deadline."""
        return (self.max_models is None or index < self.max_models) and not self.over()

    def over(self) -> bool:
        return time.monotonic() >= self.deadline


@dataclass(slots=True)
class _Flight:
    """The tasks of one run still in flight: diffs by model index, and repros."""

    diffs: dict[int, Future[Outcome]] = field(default_factory=dict)
    repros: set[Future[ReproFile | None]] = field(default_factory=set)
    submitted: int = 0  # models submitted so far: the next index
    done: threading.Event = field(default_factory=threading.Event)  # set as a task ends

    def watch(self, future: Future[T]) -> Future[T]:
        future.add_done_callback(lambda _: self.done.set())
        return future


@dataclass(frozen=True, slots=True)
class _Where:
    """Where tasks run, how many models may be in flight, and whether this process takes
    models queued on the pool."""

    executor: Executor
    window: int
    steal: bool


class InProcess(Executor):
    """`submit` runs the call at once, in this process: `--workers 1`, no pool."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as e:  # as a pool would: the caller reads it from the future
            future.set_exception(e)
        return future


def run_plan(
    plan: Plan, campaign: Campaign, workers: int | None, ray: str | None, progress: Progress | None
) -> None:
    """Diff `plan`'s models into `campaign` with `workers` processes (1: here; None: every
    core) or on the Ray cluster at `ray` (DIF-13); the last `progress` call is final."""
    with _where(workers, ray) as where, interrupts_noted() as interrupted:
        try:
            write_atomically(plan.out, to_json(campaign.to_json()))
            _drive(where, plan, campaign, progress, interrupted)
        finally:
            if progress is not None:
                progress(campaign, True)


@contextmanager
def _where(workers: int | None, ray: str | None) -> Iterator[_Where]:
    """Where the tasks run. On a pool of N-1 processes this one is the N-th worker: it diffs
    queued models itself whenever it would wait (while the pool starts, above all)."""
    if ray is not None:
        with ray_executor(ray, workers, quiet_now()) as (cluster, width):
            yield _Where(cluster, 2 * width, steal=False)  # two per CPU: none waits for work
        return
    n = workers or os.cpu_count() or 1
    if n == 1:
        yield _Where(InProcess(), 1, steal=False)
        return
    with process_pool(n - 1) as pool:
        yield _Where(pool, 8 * n, steal=True)  # enough queued for this process to take


def _drive(
    where: _Where,
    plan: Plan,
    campaign: Campaign,
    progress: Progress | None,
    interrupted: threading.Event,
) -> None:
    flight = _Flight(submitted=campaign.models)  # a continued campaign goes on from there
    _top_up(where, plan, flight)
    while flight.diffs or flight.repros:
        if interrupted.is_set():  # a Ctrl-C that a model's diff swallowed
            raise KeyboardInterrupt
        if not (where.steal and _steal(flight, plan)):
            _wait(flight, plan)
        recorded = _record_ready(where.executor, plan, campaign, flight)
        if _keep_repros(plan, campaign, flight) or recorded:
            write_atomically(plan.out, to_json(campaign.to_json()))
        if recorded and progress is not None:
            progress(campaign, False)
        _top_up(where, plan, flight)


def _top_up(where: _Where, plan: Plan, flight: _Flight) -> None:
    while len(flight.diffs) < where.window and plan.wants(flight.submitted):
        index = flight.submitted
        task = where.executor.submit(diff_task, plan.seed, index, plan.against)
        flight.diffs[index] = flight.watch(task)
        flight.submitted += 1


def _steal(flight: _Flight, plan: Plan) -> bool:
    """Diff here the first model still queued on the pool (not yet handed to a worker), so
    that models are done about in index order and recorded as they are. False when there is
    none: every model in flight is done or running."""
    if plan.over():
        return False
    for index in sorted(flight.diffs):
        future = flight.diffs[index]
        if future.done() or not future.cancel():  # done, or running on the pool
            continue
        task = InProcess().submit(diff_task, plan.seed, index, plan.against)
        flight.diffs[index] = flight.watch(task)
        return True
    return False


def _wait(flight: _Flight, plan: Plan) -> None:
    """Until a task ends (a completion after the wait sets `done` again, one before it is
    seen as `future.done()`); at the deadline, cancel the queued models (those running finish:
    a cancelled model ends the recorded prefix)."""
    left = plan.deadline - time.monotonic()
    flight.done.wait(left if left > 0 else None)
    flight.done.clear()
    if plan.over():
        for future in flight.diffs.values():
            future.cancel()


def _record_ready(executor: Executor, plan: Plan, campaign: Campaign, flight: _Flight) -> bool:
    """Record the done outcomes that come next by index; ask for their new signatures'
    repros. True when a model was recorded."""
    recorded = False
    while (future := flight.diffs.get(campaign.models)) is not None and future.done():
        if future.cancelled():  # the deadline: no later model is recorded either
            flight.diffs.clear()
            break
        del flight.diffs[campaign.models]
        fail = _oracle_error(plan, campaign)
        for index, d in campaign.record(_result(future, fail)):
            if plan.repro_dir is not None:
                task = executor.submit(repro_task, plan.seed, index, d, plan.against)
                flight.repros.add(flight.watch(task))
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


# A Ctrl-C can land in a semaphore's finalizer, before it unregisters: multiprocessing's resource
# tracker then unlinks the semaphore itself at exit, as it should, and warns that it had to.
TRACKER_QUIET = "ignore:resource_tracker:UserWarning"


@contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """`workers` spawned processes; on an exception (Ctrl-C included) they are terminated, not
    waited for."""
    context = multiprocessing.get_context("spawn")
    if TRACKER_QUIET not in sys.warnoptions:  # read when the resource tracker starts
        sys.warnoptions.append(TRACKER_QUIET)
    starting = (quiet_now(), os.getpid())
    pool = ProcessPoolExecutor(workers, context, initializer=_start_worker, initargs=starting)
    try:
        yield pool
    except BaseException:
        _terminate(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(quiet: bool, parent: int) -> None:
    die_with_parent(parent)  # DIF-17: however the main process ends, its workers end with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group
    # At exit multiprocessing has run its finalizers and flushed the streams by now; what is
    # left is tearing down torch's modules, a second the pool's shutdown would wait for.
    atexit.register(os._exit, 0)
    prepare_worker(quiet)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Python 3.14's `ProcessPoolExecutor.terminate_workers`: 3.11 has no public way."""
    if sys.version_info >= (3, 14):
        pool.terminate_workers()
        return
    processes = list(pool._processes.values()) if pool._processes else []
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()
