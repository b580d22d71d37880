"""Campaigns on a Ray cluster (spec chapter 08, DIF-13): the one module that uses `ray`, an
optional extra (`pip install 'fxoracle[cluster]'`), imported only when asked for and untyped.

`RayExecutor` is a `concurrent.futures.Executor` whose `submit` runs the call as a Ray task (one
CPU each), so a campaign on a cluster is scheduled and recorded by the same code as on a
process pool (`checker.oracle.pool.pool`). A task first prepares its worker (one thread,
as quiet as this process). Cancelling a future cancels its task.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from checker.oracle.pool.worker import prepare_worker
from reference.errors import FxOracleError

P = ParamSpec("P")
T = TypeVar("T")
MISSING = "fxoracle fuzz: --ray needs the optional extra: pip install 'fxoracle[cluster]'"


def import_ray() -> Any:
    """The `ray` module; `FxOracleError` (bad input, exit 2) when the extra is missing."""
    try:
        return importlib.import_module("ray")
    except ImportError as e:
        raise FxOracleError(MISSING) from e


def _in_worker(quiet: bool, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    prepare_worker(quiet)
    return fn(*args, **kwargs)


def _settle(ours: Future[T], theirs: Future[T]) -> None:
    """Pass Ray's result on to `ours`, unless `ours` was cancelled meanwhile."""
    if not ours.set_running_or_notify_cancel():
        return
    error = theirs.exception()
    if error is None:
        ours.set_result(theirs.result())
    else:
        ours.set_exception(error)


class RayExecutor(Executor):
    """`submit` runs the call as a Ray task; the future's `cancel` cancels the task."""

    def __init__(self, ray: Any, quiet: bool) -> None:
        self._ray = ray
        self._quiet = quiet
        self._task = ray.remote(_in_worker)

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        ref = self._task.remote(self._quiet, fn, *args, **kwargs)
        ours: Future[T] = Future()
        ours.add_done_callback(lambda f: self._ray.cancel(ref) if f.cancelled() else None)
        ref.future().add_done_callback(lambda theirs: _settle(ours, theirs))
        return ours


@contextmanager
def ray_executor(address: str, workers: int | None, quiet: bool) -> Iterator[tuple[Executor, int]]:
    """An executor on the Ray cluster at `address` (`local`: a Ray instance started here with
    `workers` CPUs, or all), and its width: `workers`, or the cluster's CPUs."""
    ray = import_ray()
    if address == "local":
        ray.init(num_cpus=workers, include_dashboard=False, logging_level=logging.ERROR)
    else:
        ray.init(address=address, logging_level=logging.ERROR)
    try:
        yield RayExecutor(ray, quiet), workers or max(1, int(ray.cluster_resources()["CPU"]))
    finally:
        ray.shutdown()
