"""Where tasks run: here, on a pool of processes or on a Ray cluster, with this process taking
the tasks still queued whenever it would wait (spec chapter 08, DIF-13, DIF-14, DIF-17).

`Pool` holds tasks of one kind by key on an `Executor`; `steal` runs here the task of lowest key
still queued (not yet handed to a worker), so tasks are done about in key order and no time is
lost while the pool's processes start and import torch. `fxoracle diff --workers` and fuzz
campaigns both schedule on it. `where(workers, ray)` picks the executor: `InProcess` for one
worker, a `process_pool` of N-1 processes (this one being the N-th), or a Ray cluster.

Pool workers are spawned (not forked: torch runs threads), keep this process's thread count and
quietness (`prepare_worker`) and ignore Ctrl-C: the main process handles it by terminating them.
However the main process ends, `kill -9` included, its workers end with it (DIF-17).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from concurrent.futures.process import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Generic, ParamSpec, TypeVar

from checker.oracle.pool.cluster import ray_executor
from checker.oracle.pool.worker import die_with_parent, prepare_worker, quiet_now

P = ParamSpec("P")
T = TypeVar("T")
# A Ctrl-C can land in a semaphore's finalizer, before it unregisters: multiprocessing's resource
# tracker then unlinks the semaphore itself at exit, as it should, and warns that it had to.
TRACKER_QUIET = "ignore:resource_tracker:UserWarning"


class InProcess(Executor):
    """`submit` runs the call at once, in this process: `--workers 1`, or a stolen task."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as e:  # as a pool would: the caller reads it from the future
            future.set_exception(e)
        return future


class Pool(Generic[T]):
    """Tasks of one kind on `executor`, by key (`futures`); with `steals`, `steal` runs the
    first one still queued here. `done` is set whenever a task ends."""

    def __init__(
        self, executor: Executor, steals: bool, done: threading.Event | None = None
    ) -> None:
        self.executor, self.steals = executor, steals
        self.done = done or threading.Event()
        self.futures: dict[int, Future[T]] = {}
        self._calls: dict[int, Callable[[], T]] = {}

    def submit(self, key: int, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> None:
        self._calls[key] = partial(fn, *args, **kwargs)
        self.futures[key] = self._watched(self.executor.submit(fn, *args, **kwargs))

    def steal(self) -> int | None:
        """Run here the task of lowest key still queued on the executor; its key, or None when
        there is none (every task is done or running on a worker)."""
        if not self.steals:
            return None
        for key in sorted(self.futures):
            future = self.futures[key]
            if future.done() or not future.cancel():  # done, or running on a worker
                continue
            self.futures[key] = self._watched(InProcess().submit(self._calls[key]))
            return key
        return None

    def pop(self, key: int) -> Future[T]:
        del self._calls[key]
        return self.futures.pop(key)

    def _watched(self, future: Future[T]) -> Future[T]:
        future.add_done_callback(lambda _: self.done.set())
        return future


@dataclass(frozen=True, slots=True)
class Where:
    """Where tasks run, how many may be in flight, and whether this process steals queued
    ones."""

    executor: Executor
    window: int
    steals: bool


@contextmanager
def where(workers: int | None, ray: str | None) -> Iterator[Where]:
    """`workers` processes (1: this one; None: every core), or the Ray cluster at `ray` with
    `workers` CPUs (None: all). On a pool of N-1 processes this one is the N-th worker."""
    if ray is not None:
        with ray_executor(ray, workers, quiet_now()) as (cluster, width):
            yield Where(cluster, 2 * width, steals=False)  # two per CPU: none waits for work
        return
    n = workers or os.cpu_count() or 1
    if n == 1:
        yield Where(InProcess(), 1, steals=False)
        return
    with process_pool(n - 1) as pool:
        yield Where(pool, 8 * n, steals=True)  # enough queued for this process to take


@contextmanager
def process_pool(workers: int, *, fresh_each: bool = False) -> Iterator[ProcessPoolExecutor]:
    """`workers` spawned processes; with `fresh_each`, each task gets a process of its own (a
    process ends after one task and a new one takes its place). On an exception (Ctrl-C
    included) they are terminated, not waited for."""
    context = multiprocessing.get_context("spawn")
    if TRACKER_QUIET not in sys.warnoptions:  # read when the resource tracker starts
        sys.warnoptions.append(TRACKER_QUIET)
    starting = (quiet_now(), os.getpid())
    pool = ProcessPoolExecutor(workers, context, initializer=_start_worker, initargs=starting,
                               max_tasks_per_child=1 if fresh_each else None)  # fmt: skip
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
