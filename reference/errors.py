"""The one exception type fxoracle raises on bad input, and how an exception is told in one line.

Internal invariants are `assert`s whose messages start with a spec id; a caller that passes a
malformed graph, a non-graph, or an impossible request gets `FxOracleError` with a message that
says what is wrong and, where it helps, what to do. The CLI turns it into one line and exit 2.
The public entry points check their arguments' types first (`expect`, `expect_method`: spec
chapter 10, FIL-6), so a wrong one is never an `AttributeError` from deep inside.
"""

from __future__ import annotations

import traceback


class FxOracleError(Exception):
    """Bad input to fxoracle: the message says what is wrong. Never an internal bug."""


def first_line(e: BaseException) -> str:
    """The first line of `e`'s message, or `(no message)` with the function that raised it when
    `e` was raised (`(no message) in _stable_topological_sort`: torch 2.11 and 2.12 assert bare).
    """
    text = str(e).strip()
    if text:
        return text.splitlines()[0]
    tb = e.__traceback__
    return f"(no message) in {traceback.extract_tb(tb)[-1].name}" if tb else "(no message)"


def describe(e: BaseException) -> str:
    """`Type: first line of the message`: what every report says of an exception."""
    return f"{type(e).__name__}: {first_line(e)}"


def expect(value: object, kind: type | tuple[type, ...], what: str) -> None:
    """`FxOracleError` unless `value` is a `kind` (FIL-6): `what` names the argument."""
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        names = " or ".join(k.__qualname__ for k in kinds)
        raise FxOracleError(f"{what} must be a {names}, not {type(value).__name__}")


def expect_method(value: object, method: str, what: str) -> None:
    """`FxOracleError` unless `value` has a callable `method` (FIL-6)."""
    if not callable(getattr(value, method, None)):
        raise FxOracleError(f"{what} must have a `{method}` method, not be {type(value).__name__}")
