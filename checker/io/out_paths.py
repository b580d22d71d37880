"""Where a run writes, checked before it does any work (spec chapter 10, FIL-2).

A report path must be writable and name a file: its folder exists and can be written, it is no
folder, it is none of the run's input files, and two outputs of one run are never one file. A
path that exists and is no regular file (a device, a FIFO, `/dev/stdout`, `/dev/fd/N`) is a
*stream*: it is written straight, never replaced (`checker.io.reports`). A repro folder may not
exist yet, but the nearest folder above it must be writable. So a bad path costs a line and exit
2 at once, not a traceback after a three-minute run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from reference.errors import FxOracleError

STREAM_ROOTS = ("/proc/", "/dev/fd/")  # an open file of this process, whatever it points to


def is_stream(path: Path) -> bool:
    """`path` exists and is no regular file or folder, or it leads through `/proc` or
    `/dev/fd` (`/dev/stdout` is a link to `/proc/self/fd/1`, whatever fd 1 is)."""
    at = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links followed
        if at.startswith(STREAM_ROOTS):
            return True
        if not os.path.islink(at):
            break
        at = os.path.join(os.path.dirname(at), os.readlink(at))
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_outputs(
    files: Sequence[str | None],
    folders: Sequence[str | None] = (),
    inputs: Sequence[str | Path] = (),
) -> None:
    """Every report file and repro folder of a run can be written, before any work (FIL-2);
    `None` and `-` (stdout) are skipped. `FxOracleError` names the first that cannot."""
    given = [Path(f) for f in files if f is not None and f != "-"]
    for p in given:
        _check_file(p, inputs)
    regular = [os.path.realpath(p) for p in given if not is_stream(p)]
    if len(set(regular)) < len(regular):
        raise FxOracleError(f"{given[0]}: two reports of this run would be one file")
    for folder in folders:
        if folder is not None:
            check_folder(Path(folder))


def _check_file(p: Path, inputs: Sequence[str | Path]) -> None:
    if is_stream(p):
        if not os.access(p, os.W_OK):
            raise FxOracleError(f"{p}: cannot be written")
        return
    if p.is_dir():
        raise FxOracleError(f"{p}: is a folder, not a file")
    real = Path(os.path.realpath(p))
    if real.exists():
        if any(Path(i).exists() and os.path.samefile(real, i) for i in inputs):
            raise FxOracleError(f"{p}: is an input of this run; write the report elsewhere")
        if not os.access(real, os.W_OK):
            raise FxOracleError(f"{p}: is read-only")
    _writable_folder(real.parent, p)


def check_folder(p: Path) -> None:
    """`p` is a writable folder, or can be made: the nearest existing folder above it is
    writable."""
    if p.exists() and not p.is_dir():
        raise FxOracleError(f"{p}: is not a folder")
    above = Path(os.path.abspath(p))
    while not above.exists():
        above = above.parent
    if not above.is_dir():
        raise FxOracleError(f"{p}: {above} is not a folder")
    _writable_folder(above, p)


def _writable_folder(folder: Path, p: Path) -> None:
    if not folder.is_dir():
        raise FxOracleError(f"{p}: no such folder {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FxOracleError(f"{p}: folder {folder} is read-only")
