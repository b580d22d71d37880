"""Workers die with the process that started them (spec chapter 08, DIF-17).

A pool worker blocks on a queue whose write end every worker holds too, so when the main process
is killed (`kill -9`, SIGTERM, the OOM killer) nothing wakes it: before, each one (about 370 MB)
and multiprocessing's resource tracker lived on for good. `die_with_parent(pid)` runs first in
every worker: on Linux the kernel kills it when its parent dies (`PR_SET_PDEATHSIG`, set through
`prctl`; the parent is then checked, since it may have died already), and everywhere a daemon
thread polls the parent's pid. Once the workers are gone, the resource tracker reads the end of
its pipe and exits too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

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
