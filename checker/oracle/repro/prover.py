"""Running a repro as its reader will: in a fresh interpreter (spec chapter 08, DIF-8, DIF-15).

The shrinker tries its candidates in this process, where whatever the model file did at import
(registering a custom op, a workaround patched into torch) is still in effect: a statement with
such a process-wide effect looks removable, and the repro written without it fails with
`operator ... does not exist` instead of the promised `AssertionError`. A `Prover` runs each
repro as a script in a process no model ever ran in, and says whether it raised
`AssertionError`. Importing torch takes two seconds and every repro does it, so the prover
starts one interpreter (this one's `sys.path`, so a plug-in named by `module:attr` imports there
too) that imports torch once and forks a child per repro: a child is a fresh interpreter that
has imported torch and run nothing else. Both die with this process (`PR_SET_PDEATHSIG`).
`fails_here` is the fast, in-process check the shrinker uses on every candidate.
"""

from __future__ import annotations

import os
import runpy
import select
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

import torch

TIMEOUT_S = 300  # a repro runs in seconds; one that hangs is no repro
ASSERTION = 17  # a child's exit status when the repro raised AssertionError
ZYGOTE = f"""import ctypes, os, runpy, signal, sys


def die_with(parent):
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def run(path, zygote):
    die_with(zygote)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)
    os.chdir(os.path.dirname(path))
    sys.argv, sys.path[0] = [path], os.path.dirname(path)
    try:
        runpy.run_path(path, run_name="__main__")
    except AssertionError:
        os._exit({ASSERTION})
    except BaseException:
        os._exit(1)
    os._exit(0)


die_with(int(sys.argv[1]))
zygote = os.getpid()
import torch, torch._dynamo  # what every repro imports, once
for line in sys.stdin:
    child = os.fork()
    if child == 0:
        run(line.strip(), zygote)
    status = os.waitpid(child, 0)[1]
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


class Prover:
    """Runs repros in fresh interpreters; `close` ends its helper process (`with closing(...)`)."""

    def __init__(self) -> None:
        self._zygote: subprocess.Popen[str] | None = None

    def fails(self, text: str) -> bool:
        """Run `text` as a script in a fresh interpreter: True when it raised AssertionError."""
        with tempfile.TemporaryDirectory(prefix="fxoracle-repro-") as tmp:
            repro = Path(tmp) / "repro.py"
            repro.write_text(text, encoding="utf-8")
            return self._status(repro) == ASSERTION

    def _status(self, repro: Path) -> int | None:
        """The child's exit status; None when it timed out or the helper died (restarted on
        the next repro)."""
        zygote = self._started()
        assert zygote.stdin is not None and zygote.stdout is not None
        try:
            zygote.stdin.write(f"{repro}\n")
            zygote.stdin.flush()
            ready, _, _ = select.select([zygote.stdout], [], [], TIMEOUT_S)
            line = zygote.stdout.readline() if ready else ""
        except OSError:  # the helper died (a broken pipe)
            line = ""
        if not line.strip().lstrip("-").isdigit():
            self.close()
            return None
        return int(line)

    def _started(self) -> subprocess.Popen[str]:
        if self._zygote is None or self._zygote.poll() is not None:
            env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            argv = [sys.executable, "-c", ZYGOTE, str(os.getpid())]
            pipe, quiet = subprocess.PIPE, subprocess.DEVNULL
            self._zygote = subprocess.Popen(
                argv, stdin=pipe, stdout=pipe, stderr=quiet, env=env, text=True
            )
        return self._zygote

    def close(self) -> None:
        """End the helper (and a repro it runs: the child dies with it)."""
        if self._zygote is not None:
            self._zygote.kill()
            self._zygote.wait()
            self._zygote = None


def fails_standalone(text: str) -> bool:
    """Run `text` as a script in a fresh interpreter (a prover of its own): True when it raised
    AssertionError."""
    with closing(Prover()) as prover:
        return prover.fails(text)


def fails_with_assertion(repro: Path) -> bool:
    """Running the file `repro` as a script, in a fresh interpreter, raises AssertionError."""
    return fails_standalone(repro.read_text(encoding="utf-8"))


def fails_here(text: str) -> bool:
    """Run `text` as a script in this process: True when it raised AssertionError. Anything
    else it raises, `SystemExit` included, is a candidate that does not keep the failure."""
    with tempfile.TemporaryDirectory(prefix="fxoracle-repro-") as tmp:
        repro = Path(tmp) / "repro.py"
        repro.write_text(text, encoding="utf-8")
        try:
            runpy.run_path(str(repro), run_name="__main__")
        except AssertionError:
            return True
        except (Exception, SystemExit):
            return False
        finally:
            torch._dynamo.reset()
    return False
