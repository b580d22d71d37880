"""One writer per file: an advisory lock held while a run writes a file it reads back (a fuzz
campaign's findings), so two runs never write one file and lose each other's findings (spec
chapter 10, FIL-13; chapter 08, DIF-16).

The lock is `fcntl.flock` on `.<name>.fxoracle-lock` beside the file (the file itself is
replaced by every atomic write, so a lock on it would not last). A second run finds it held and
stops at once: `FxOracleError`, exit 2. The holder removes the lock file when done; a run killed
meanwhile leaves it, unlocked, and the next run takes it. A stream is not locked.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from checker.io.out_paths import identity, is_stream
from checker.io.reports import TMP_STEM
from reference.errors import FxOracleError

LOCK_SUFFIX = ".fxoracle-lock"


@contextmanager
def exclusive(path: Path, what: str) -> Iterator[None]:
    """The block runs holding `path`'s lock; `FxOracleError` when another process holds it."""
    if is_stream(path):
        yield
        return
    lock = path.parent / f".{path.name[:TMP_STEM]}{LOCK_SUFFIX}"
    fd = _take(lock, path, what)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        lock.unlink(missing_ok=True)  # still held: no one else can have taken it
        os.close(fd)


def _take(lock: Path, path: Path, what: str) -> int:
    """The lock file's descriptor, locked: retried when the holder removed the file between
    this process opening and locking it."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise FxOracleError(f"{path}: cannot lock: {e.strerror or e}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise FxOracleError(f"{path}: another {what}{holder} is writing it; wait for it "
                                "to end or choose another file") from None  # fmt: skip
        st = os.fstat(fd)
        if identity(lock) == (st.st_dev, st.st_ino):
            return fd
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {text})" if text.isdigit() else ""
