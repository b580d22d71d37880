"""Running code a user wrote: a model file, a graph-module file, a plug-in's import or
constructor (spec chapter 10, FIL-4).

Whatever that code raises, `SystemExit` included, is bad input: `FxOracleError` with one line that
names the file and what it raised (`model.py raised SystemExit(0) at import`), so the command
line exits 2 and says why; a `BaseException` of the user's own too. Only Ctrl-C passes through.
Source files are read as Python reads them (`tokenize.open`: a UTF-8 BOM, a `coding:` line),
never as plain UTF-8.

A user's code runs with a time limit (`time_limit`: `--time-limit`, default
`DEFAULT_TIME_LIMIT_S` per call, FIL-11) and with its prints on stderr (`stdout_to_stderr`:
stdout carries fxoracle's report alone, `--json -` included).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import threading
import tokenize
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from checker.io.supervise import doing
from reference.errors import FxOracleError, describe, first_line


def what_raised(e: BaseException) -> str:
    """`SystemExit(0)` for an exit, else `Type: first line of the message`."""
    if isinstance(e, SystemExit):
        code = e.code if e.code is None or type(e.code) in (int, str) else type(e.code).__name__
        return f"SystemExit({code!r})"
    return describe(e)


def raised_when(where: str, e: BaseException, when: str) -> str:
    """`<where> raised <what> <when>`; a message that itself ends with `<when>` is quoted
    (`raised RuntimeError('boom at import') at import`), never read as said twice."""
    what = what_raised(e)
    if not isinstance(e, SystemExit) and what.endswith(f" {when}"):
        what = f"{type(e).__name__}({first_line(e)!r})"
    return f"{where} raised {what} {when}"


@contextmanager
def user_code(where: str, when: str) -> Iterator[None]:
    """The block runs a user's code: what it raises becomes `FxOracleError("<where> raised
    <what> <when>")`; a syntax error names its line (FIL-4)."""
    doing(f"running {where} {when}")  # a crash in it is blamed on it (FIL-11)
    try:
        with time_limit(f"{where} {when}"):
            yield
    except FxOracleError:
        raise
    except SyntaxError as e:
        raise FxOracleError(f"{where}:{e.lineno}: syntax error: {e.msg}") from e
    except KeyboardInterrupt:  # Ctrl-C stays Ctrl-C
        raise
    except BaseException as e:  # SystemExit, a user's own BaseException subclass
        raise FxOracleError(raised_when(where, e, when)) from e


def existing(path: str | Path) -> Path:
    """`path`, a regular file that can be read; else `FxOracleError` saying what it is (FIL-10):
    missing, a folder, a FIFO or device, unreadable."""
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise FxOracleError(f"{p}: no such file") from None
    except (OSError, ValueError) as e:
        raise FxOracleError(f"{p}: cannot read: {_why(e)}") from e
    if stat.S_ISDIR(mode):
        raise FxOracleError(f"{p}: is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise FxOracleError(f"{p}: is not a regular file (a FIFO, a device or a socket)")
    if not os.access(p, os.R_OK):
        raise FxOracleError(f"{p}: cannot read: permission denied")
    return p


def _why(e: BaseException) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror else str(e)


def read_source(path: Path) -> str:
    """The text of a Python file as the interpreter decodes it (BOM, `coding:` line)."""
    try:
        with tokenize.open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise FxOracleError(f"{path}: cannot read: {describe(e)}") from e
    except SyntaxError as e:  # an unknown or inconsistent `coding:` declaration
        raise FxOracleError(f"{path}: cannot read: {first_line(e)}") from e


def shown_name(path: Path) -> str:
    """`path`'s file name as reports print it: bytes that are not UTF-8 become U+FFFD."""
    return os.fsencode(path.name).decode("utf-8", "replace")


TIME_LIMIT_ENV = "FXORACLE_TIME_LIMIT"  # seconds, set by `--time-limit` for every process
DEFAULT_TIME_LIMIT_S = 600.0


class TimeLimit(Exception):
    """A user's code ran past the time limit (FIL-11)."""


def limit_s() -> float:
    """The time limit of one call into a user's code (0: none)."""
    try:
        return float(os.environ.get(TIME_LIMIT_ENV, DEFAULT_TIME_LIMIT_S))
    except ValueError:
        return DEFAULT_TIME_LIMIT_S


@contextmanager
def time_limit(what: str) -> Iterator[None]:
    """`TimeLimit` raised in the block once it runs past `limit_s()` (SIGALRM: in the main
    thread, and only the outermost block times; elsewhere the block runs unlimited)."""
    seconds = limit_s()
    main = threading.current_thread() is threading.main_thread()
    if seconds <= 0 or not main or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeLimit(f"{what} took longer than {seconds:g} s (--time-limit)")

    before = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """What the block prints, `print` or file descriptor 1, goes to stderr: stdout is kept for
    the report (`--json -`)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    try:
        saved = os.dup(1)
    except OSError:  # stdout is closed: nothing to keep apart
        yield
        return
    before = sys.stdout
    with contextlib.suppress(OSError):  # stderr closed: prints go where they went
        os.dup2(2, 1)
    # a stream of the block's own: user code that closes it closes nothing of fxoracle's
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        sys.stdout = before
        os.dup2(saved, 1)
        os.close(saved)


@contextmanager
def time_limit_set(seconds: float | None) -> Iterator[None]:
    """`--time-limit` for the block, in this process and the workers it starts (which inherit
    the environment); None keeps what is set."""
    if seconds is None:
        yield
        return
    before = os.environ.get(TIME_LIMIT_ENV)
    os.environ[TIME_LIMIT_ENV] = repr(seconds)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TIME_LIMIT_ENV, None)
        else:
            os.environ[TIME_LIMIT_ENV] = before
