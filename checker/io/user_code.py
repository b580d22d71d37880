"""Running code a user wrote: a model file, a graph-module file, a plug-in's import or
constructor (spec chapter 10, FIL-4).

Whatever that code raises, `SystemExit` included, is bad input: `FxOracleError` with one line that
names the file and what it raised (`model.py raised SystemExit(0) at import`), so the command
line exits 2 and says why. Only Ctrl-C passes through. Source files are read as Python reads
them (`tokenize.open`: a UTF-8 BOM, a `coding:` line), never as plain UTF-8.
"""

from __future__ import annotations

import os
import tokenize
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reference.errors import FxOracleError, describe, first_line


def what_raised(e: BaseException) -> str:
    """`SystemExit(0)` for an exit, else `Type: first line of the message`."""
    if isinstance(e, SystemExit):
        return f"SystemExit({e.code!r})"
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
    try:
        yield
    except FxOracleError:
        raise
    except SyntaxError as e:
        raise FxOracleError(f"{where}:{e.lineno}: syntax error: {e.msg}") from e
    except (Exception, SystemExit) as e:  # not KeyboardInterrupt: Ctrl-C stays Ctrl-C
        raise FxOracleError(raised_when(where, e, when)) from e


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
