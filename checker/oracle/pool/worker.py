"""What a worker process does first: die with the process that started it, and key and log as
it does (spec chapter 08, DIF-13, DIF-17).

A pool worker blocks on a queue whose write end every worker holds too, so when the main process
is killed (`kill -9`, SIGTERM, the OOM killer) nothing wakes it: each one (about 370 MB) and
multiprocessing's resource tracker would live on for good. `die_with_parent(pid)` runs first in
every worker: on Linux the kernel kills it when its parent dies (`PR_SET_PDEATHSIG`, set through
`prctl`; the parent is then checked, since it may have died already), and everywhere a daemon
thread polls the parent's pid. Once the workers are gone, the resource tracker reads the end of
its pipe and exits too. `prepare_worker` keeps torch's thread count and this process's quietness.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time
import warnings

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_S = 0.5  # how often the watch thread looks for its parent


def die_with_parent(parent: int) -> None:
    """In a worker: be killed when process `parent`, the one that started it, dies."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)
    watch = threading.Thread(target=_watch, args=(parent,), name="fxoracle-parent", daemon=True)
    watch.start()


def _watch(parent: int) -> None:
    """`PR_SET_PDEATHSIG` fires when the *thread* that started this process ends, and exists on
    Linux only: this thread covers the rest."""
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os._exit(1)


def quiet_now() -> bool:
    """This process keeps torch's logs and warnings off the terminal (the CLI without
    `--debug`): its workers are to do the same."""
    return logging.root.manager.disable >= logging.CRITICAL


def prepare_worker(quiet: bool) -> None:
    """A worker process keeps torch's thread count as it is: the count is part of every node
    key (TRK-2), so a worker must key as this process does (DIF-13); the runs that compute
    use one thread each (`checker.proof.runs`), so N workers still scale on N cores."""
    if quiet:
        logging.disable(logging.CRITICAL)
        warnings.simplefilter("ignore")
