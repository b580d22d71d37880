"""Hostile ends: however the main process of a 2-worker run dies, `kill -9` included, no process
of the run is alive 5 s later (spec chapter 08, DIF-17)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import CORPUS, ROOT

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

CLI = "import sys\nfrom checker.cli import main\nsys.exit(main(sys.argv[1:]))"


def _session(sid: int) -> list[int]:
    """The live (not zombie) processes of session `sid`, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":  # fields: state, ppid, pgrp, session
                found.append(int(entry.name))
    return found


def _loaded_torch(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return "libtorch_python" in Path(f"/proc/{pid}/maps").read_text()
    return False


def _pool_started(main: int) -> bool:
    """Besides the main process: the resource tracker and a worker that has loaded torch."""
    others = [p for p in _session(main) if p != main]
    return len(others) >= 2 and any(_loaded_torch(p) for p in others)


def _kill_and_watch(argv: list[str], sig: signal.Signals) -> list[int]:
    """Start `argv` in a session of its own, wait until its pool worker has loaded torch (the
    main process, the resource tracker and one worker), kill the main process with `sig`, and
    return the processes of the session still alive once they had 60 s to go (a loaded machine
    takes seconds to schedule a worker that notices its parent is gone)."""
    proc = subprocess.Popen(argv, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _pool_started(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline, "the pool never started"
            time.sleep(0.2)
        time.sleep(1.0)  # the worker past its start-up: what it is asked to do has begun
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 60
        while _session(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        return _session(proc.pid)
    finally:
        for pid in _session(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.spec("DIF-17")
def test_dif17_kill_9_of_a_two_worker_campaign_leaves_no_process(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", CLI, "fuzz", "--workers", "2", "--minutes", "5",
            "--out", str(tmp_path / "f.json")]  # fmt: skip
    assert _kill_and_watch(argv, signal.SIGKILL) == []


@pytest.mark.spec("DIF-17")
def test_dif17_sigterm_of_a_two_worker_diff_leaves_no_process() -> None:
    models = sorted(str(p) for p in CORPUS.glob("t*.py"))
    argv = [sys.executable, "-c", CLI, "diff", *models, "--against", "torch", "--workers", "2"]
    assert _kill_and_watch(argv, signal.SIGTERM) == []
