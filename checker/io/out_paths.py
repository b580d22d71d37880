"""Where a run writes: one rule for every path fxoracle writes, applied before any work (spec
chapter 10, FIL-2, FIL-9, FIL-18).

`check_outputs` resolves each output once, before any user code runs and before the working
directory can change: symlinks, `..`, `/proc/self/...`, `/dev/fd/N` and `/dev/stdin` are
followed to what they name (`resolve`). Only `-` (stdout) and a real character device or FIFO
are *streams*, written straight (`checker.io.reports`); anything else is a regular file at an
absolute path, and must not be any input of the run (model files, plug-in sources, answer
files, a campaign continued), another output of the run, or the file this process's stdout or
stderr already writes to. A repro folder is a folder or can be made, and holds no input a
repro could be named as. So a bad path costs a line and exit 2 at once, not a traceback after
a three-minute run, and nothing a user has is written over.

Nor is a file fxoracle did not write (FIL-18): an existing, non-empty file is replaced only
when its first bytes are those of an fxoracle output of the same kind (`HEADS`: a JSON report's
first key `"$fxoracle"` names its kind, an HTML report's and a repro's first line), read as a
bounded prefix, never parsed or run. A repro folder holds no `*_repro.py` fxoracle did not write.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from checker.io.shown import shown
from reference.errors import FxOracleError

VIRTUAL = ("/proc/", "/dev/", "/sys/")  # a file that does not exist there cannot be made
REPRO_SUFFIX = "_repro.py"  # every repro's name ends so (DIF-8)
MARK = "$fxoracle"  # every JSON report's first key (sorted first), its kind the value (FIL-18)
HTML_HEAD = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>fxoracle'
REPRO_HEAD = "# fxoracle repro ("  # every repro's first line begins so (DIF-28)
JSON_KINDS = ("verify", "explain", "diff", "fuzz", "bench", "course")
NAMES = {"html": "HTML report", "repro": "repro", "fuzz": "fuzz campaign"}


def marked(kind: str, data: dict[str, object]) -> dict[str, object]:
    """`data` as the JSON report of `kind` (one of `JSON_KINDS`): `MARK` first (FIL-18)."""
    assert kind in JSON_KINDS, f"FIL-18: {kind!r} is no JSON report kind"
    return {MARK: kind} | data


def head(kind: str) -> bytes:
    """The first bytes of every output of `kind` fxoracle writes (FIL-18)."""
    if kind == "html":
        return HTML_HEAD.encode()
    if kind == "repro":
        return REPRO_HEAD.encode()
    assert kind in JSON_KINDS, f"FIL-18: {kind!r} is no output kind"
    return f'{{\n  "{MARK}": "{kind}"'.encode()


def refuse_foreign(path: Path, kind: str, given: str) -> None:
    """`FxOracleError` unless `path` is missing, empty, or begins as an fxoracle output of
    `kind` does (FIL-18): only its first bytes are read."""
    want = head(kind)
    try:
        with open(path, "rb") as f:
            first = f.read(len(want) + 1)
    except FileNotFoundError:
        return
    except OSError:
        first = b"\0"  # unreadable: fxoracle cannot tell that it wrote it
    tail = first[len(want) :]  # a JSON report's kind is followed by its next key
    if first == b"" or (first.startswith(want) and (kind not in JSON_KINDS or tail in b",\n")):
        return
    what = NAMES.get(kind, f"{kind} report")
    raise FxOracleError(
        f"{shown(given)}: exists and is not an fxoracle {what}; remove it or choose another path"
    )


@dataclass(frozen=True, slots=True)
class Output:
    """One output, resolved: `path` is absolute with every link followed (a file), or the
    stream as given, made absolute (`-`: stdout)."""

    given: str
    path: Path
    stream: bool

    def __str__(self) -> str:
        return self.given


@dataclass(frozen=True, slots=True)
class Outputs:
    """The outputs of one run, resolved and checked, in the order they were given (`None`
    where an option was not given)."""

    files: tuple[Output | None, ...]
    folders: tuple[Path | None, ...]


def is_stream(path: str | Path) -> bool:
    """`-`, or a path that is a character device or a FIFO (followed through links)."""
    if str(path) == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def resolve(given: str | Path) -> Output:
    """`given` resolved once: a stream, or the regular file it names (FIL-9)."""
    text = str(given)
    if text == "-":
        return Output(text, Path("-"), True)
    st = _stat(text)
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        return Output(text, Path(os.path.abspath(text)), True)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise FxOracleError(f"{shown(text)}: is a folder, not a file")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise FxOracleError(f"{shown(text)}: is neither a file nor a device or FIFO")
    real = Path(os.path.realpath(text))
    if st is not None and not _same_file(real, st):  # a deleted file still open, a socket
        raise FxOracleError(f"{shown(text)}: names no file fxoracle can write in place")
    if st is None and str(real).startswith(VIRTUAL):
        raise FxOracleError(f"{shown(text)}: cannot be written")
    return Output(text, real, False)


def _stat(text: str) -> os.stat_result | None:
    try:
        return os.stat(text)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:  # too long, a loop of links, a NUL byte, no access
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise FxOracleError(f"{shown(text)}: cannot be written: {why}") from e


def _same_file(real: Path, st: os.stat_result) -> bool:
    try:
        there = os.stat(real)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (st.st_dev, st.st_ino)


def identity(path: str | Path) -> tuple[int, int] | None:
    """The (device, inode) of an existing file, or None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def check_outputs(
    files: Sequence[tuple[str | None, str]],
    folders: Sequence[str | None] = (),
    inputs: Sequence[str | Path] = (),
) -> Outputs:
    """Every report file, given with its kind (`html` or one of `JSON_KINDS`), and repro folder
    of a run resolved and checked, before any work (FIL-2, FIL-9, FIL-18); `None` is skipped.
    `FxOracleError` names the first that cannot be used."""
    resolved = tuple(None if f is None else resolve(f) for f, _ in files)
    taken = _taken(inputs)
    seen: set[tuple[int, int] | str] = set()
    for out in resolved:
        if out is not None:
            _check_output(out, taken, seen)
    for out, (_, kind) in zip(resolved, files, strict=True):
        if out is not None and not out.stream:
            refuse_foreign(out.path, kind, out.given)
    places = tuple(None if f is None else check_folder(Path(f), inputs) for f in folders)
    return Outputs(resolved, places)


def _check_output(
    out: Output, taken: dict[tuple[int, int], str], seen: set[tuple[int, int] | str]
) -> None:
    """A stream can be written; a file can be, is not `taken` and not one `seen` already."""
    if out.stream:
        if out.given != "-" and not os.access(out.path, os.W_OK):
            raise FxOracleError(f"{shown(out.given)}: cannot be written")
        return
    _check_file(out, taken)
    key = identity(out.path) or str(out.path)
    if key in seen:
        raise FxOracleError(f"{shown(out.given)}: two outputs of this run would be one file")
    seen.add(key)


def _taken(inputs: Sequence[str | Path]) -> dict[tuple[int, int], str]:
    """The files an output may not be: the inputs, and what stdout and stderr write to."""
    taken = {}
    for i in inputs:
        if (key := identity(i)) is not None:
            taken[key] = "is an input of this run; write the report elsewhere"
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            taken.setdefault((st.st_dev, st.st_ino), f"is where this run's {name} goes")
    return taken


def _check_file(out: Output, taken: dict[tuple[int, int], str]) -> None:
    key = identity(out.path)
    if key is not None:
        if key in taken:
            raise FxOracleError(f"{shown(out.given)}: {taken[key]}")
        if not os.access(out.path, os.W_OK):
            raise FxOracleError(f"{shown(out.given)}: is read-only")
    _writable_folder(out.path.parent, out.given)


def check_folder(p: Path, inputs: Sequence[str | Path] = ()) -> Path:
    """`p` resolved: a writable folder, or one that can be made (the nearest existing folder
    above it is writable), holding no input a repro could be named as (FIL-9) and no repro
    fxoracle did not write (FIL-18)."""
    given = str(p)
    real = Path(os.path.realpath(p))
    if real.exists() and not real.is_dir():
        raise FxOracleError(f"{shown(given)}: is not a folder")
    if not real.exists() and str(real).startswith(VIRTUAL):
        raise FxOracleError(f"{shown(given)}: cannot be made")
    above = real
    while not above.exists():
        above = above.parent
    if not above.is_dir():
        raise FxOracleError(f"{shown(given)}: {shown(str(above))} is not a folder")
    _writable_folder(above, given)
    for i in inputs:
        inside = Path(os.path.realpath(i))
        if inside.parent == real and inside.name.endswith(REPRO_SUFFIX):
            raise FxOracleError(
                f"{shown(str(i))}: an input inside --repro-dir {shown(given)} that a repro "
                "could be written over; choose another folder"
            )
    if real.is_dir():
        for repro in sorted(real.glob(f"*{REPRO_SUFFIX}")):
            refuse_foreign(repro, "repro", str(repro))
    return real


def _writable_folder(folder: Path, given: str) -> None:
    if not folder.is_dir():
        raise FxOracleError(f"{shown(given)}: no such folder {shown(str(folder))}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FxOracleError(f"{shown(given)}: folder {shown(str(folder))} is read-only")
