"""What a worker process does first: die with the process that started it, and key and log as
it does (spec chapter 08, DIF-13, DIF-17).

A pool worker blocks on a queue whose write end every worker holds too, so when the main process
is killed (`kill -9`, SIGTERM, the OOM killer) nothing wakes it: each one (about 370 MB) and
multiprocessing's resource tracker would live on for good. `die_with_parent(pid)`
(`checker.io.supervise`, which starts the command line's own child the same way) runs first in
every worker: on Linux the kernel kills it when its parent dies (`PR_SET_PDEATHSIG`, set through
`prctl`; the parent is then checked, since it may have died already), and everywhere a daemon
thread polls the parent's pid. Once the workers are gone, the resource tracker reads the end of
its pipe and exits too. `prepare_worker` keeps torch's thread count and this process's quietness.
"""

from __future__ import annotations

import logging
import warnings

from checker.io.supervise import die_with_parent

__all__ = ["die_with_parent", "prepare_worker", "quiet_now"]


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
