"""The command line's exit status, kept true whatever a user's code does (spec chapter 10,
FIL-11).

A model or plug-in can end the process under fxoracle's feet: `os._exit(0)` at import,
`atexit.register(os._exit, 0)`, a segfault in an extension, a signal, a non-daemon thread that
never ends. The `fxoracle` command therefore runs in a forked child (`supervised`) that reports
its own exit status through a pipe before it ends with `os._exit` (no atexit handler, no thread
left behind can change it). The parent, which runs no user code, waits: a child that ends
without reporting was ended by user code, and that is exit 2 with one line saying how (its exit
status or signal) and what it was doing (`doing`: the model or plug-in it was running). Ctrl-C
reaches both; the child answers it (exit 130), and a second Ctrl-C kills a child that did not.
A `SIGTERM` to the parent is passed on to the child (exit 143), and the child dies with the
parent (`die_with_parent`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from types import FrameType
from typing import TextIO

from checker.io.shown import one_line

STATUS_FD = "FXORACLE_STATUS_FD"  # `<fd>:<pid>`: the child's end of the pipe, its alone
DONE = b"\0"  # a status line starting so carries the exit code
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_S = 0.5  # how often the watch thread looks for its parent


def doing(what: str) -> None:
    """Tell the supervising process what the run is doing now (a model's name), so a crash
    in it is blamed there; nothing when not supervised."""
    fd, _, pid = os.environ.get(STATUS_FD, "").partition(":")
    if pid != str(os.getpid()):  # not supervised, or a worker, where the number is no pipe
        return
    with contextlib.suppress(OSError, ValueError):
        os.write(int(fd), one_line(what, 200).encode("utf-8", "replace") + b"\n")


def supervised(run: Callable[[], int]) -> int:
    """`run()` in a forked child; its exit status, or 2 with one line when user code ended
    the child first."""
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(run, write, parent)
    os.close(write)
    return _parent(pid, read)


def _child(run: Callable[[], int], write: int, parent: int) -> None:
    os.environ[STATUS_FD] = f"{write}:{os.getpid()}"
    os.set_inheritable(write, False)
    code = 1
    try:
        die_with_parent(parent)
        code = run()
    except BaseException:  # fxoracle's own bug: its traceback, exit 1, as without a fork
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            _flush(stream)
        os.write(write, DONE + bytes([code & 0xFF]))
        os._exit(code)


def _flush(stream: TextIO | None) -> None:
    try:
        if stream is not None:
            stream.flush()
    except (OSError, ValueError):
        pass


def _parent(pid: int, read: int) -> int:
    terminated: list[int] = []
    interrupts: list[int] = []

    def forward(signum: int, frame: FrameType | None) -> None:
        terminated.append(signum)
        os.kill(pid, signum)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        interrupts.append(signum)  # the child answers Ctrl-C; a second one ends it
        if len(interrupts) > 1:
            os.kill(pid, signal.SIGKILL)

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, forward)
    with os.fdopen(read, "rb") as pipe:
        lines = pipe.read().split(b"\n")
    _, status = os.waitpid(pid, 0)
    return _status(lines, status, terminated, interrupts)


def _status(lines: list[bytes], status: int, terminated: list[int], interrupts: list[int]) -> int:
    """The exit status of the command: the child's own, unless it was ended from outside or
    by user code."""
    if terminated:  # passed on to the child, which may have handled it (user code can)
        print("fxoracle: terminated", file=sys.stderr)
        return 128 + terminated[0]
    if lines[-1].startswith(DONE) and len(lines[-1]) == 2:
        return lines[-1][1]
    if interrupts:
        print("fxoracle: interrupted", file=sys.stderr)
        return 130
    last = lines[-2].decode("utf-8", "replace") if len(lines) > 1 else ""
    print(f"fxoracle: error: {_how(status)}{f' while {last}' if last else ''}", file=sys.stderr)
    return 2


def _how(status: int) -> str:
    """How a child that never reported its status ended."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the run was killed by {name}"
    code = os.waitstatus_to_exitcode(status)
    return f"user code ended the run (os._exit({code}) or the like)"


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
