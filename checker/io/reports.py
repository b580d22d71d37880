"""Writing reports: stable JSON, files never left half-written, and nothing a user has replaced
(spec chapter 10, FIL-3; README "Exit codes").

Every path is resolved by `checker.io.out_paths.resolve` (FIL-9), best once, before any work
(`check_outputs` gives the resolved `Output`s). A regular file, or the file a symlink names (the
link stays), is replaced by renaming a complete, fsynced temporary file beside it,
`.<name>.<pid>.<random>.fxoracle-tmp` (the name cut so the whole fits a file name); each write
first removes those whose process is gone (a run killed mid-write), so none accumulate. A stream
(a character device or a FIFO) is written straight, in append mode, never replaced; `-` is
stdout. A write that fails (no space, read-only, stdout closed) is `FxOracleError`.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from checker.io.out_paths import Output, resolve
from reference.errors import FxOracleError

TMP_SUFFIX = ".fxoracle-tmp"
TMP_STEM = 100  # characters of the report's name in its temporary file's name (NAME_MAX: 255)


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 region`, `3 regions`, `0 regions` (`many` for irregular words: `box`, `boxes`)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def to_json(data: object) -> str:
    """Sorted keys, two-space indent, a final newline: the same data, the same bytes."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def write_atomically(path: str | Path | Output, text: str) -> None:
    """Write `text` to `path` ('-' is stdout): a file is replaced whole or not at all, a stream
    is written straight (FIL-3)."""
    out = path if isinstance(path, Output) else resolve(path)
    try:
        if out.given == "-" and sys.stdout is None:
            raise FxOracleError("-: cannot write: stdout is closed")
        if out.given == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
        elif out.stream:
            _write_straight(out.path, text)
        else:
            _replace(out.path, text)
    except (OSError, ValueError) as e:  # ValueError: stdout closed
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise FxOracleError(f"{out.given}: cannot write: {why}") from e


def _write_straight(target: Path, text: str) -> None:
    """Append `text` to a stream, after whatever this process printed to its own streams."""
    sys.stdout.flush()
    sys.stderr.flush()
    with open(target, "a", encoding="utf-8", errors="backslashreplace") as f:
        f.write(text)


def _replace(target: Path, text: str) -> None:
    """Rename a complete, fsynced copy onto `target`, keeping an existing file's mode."""
    sweep_leftovers(target)
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
    fd, tmp = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name[:TMP_STEM]}.{os.getpid()}.", suffix=TMP_SUFFIX
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600; a report is meant to be read
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(target.parent)


def sweep_leftovers(target: Path) -> list[Path]:
    """Remove the temporary files of `target` whose writing process is gone; returns them."""
    stem = target.name[:TMP_STEM]
    own = re.compile(re.escape(f".{stem}.") + r"(\d{1,9})\.[^/]*" + re.escape(TMP_SUFFIX))
    gone = []
    for leftover in target.parent.glob(f".{glob.escape(stem)}.*{TMP_SUFFIX}"):
        match = own.fullmatch(leftover.name)
        if match is not None and not _alive(int(match[1])):
            leftover.unlink(missing_ok=True)
            gone.append(leftover)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _fsync_folder(folder: Path) -> None:
    """The rename itself reaches the disk (best effort: some file systems refuse)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
