"""The one exception type fxoracle raises on bad input, and how an exception is told in one line.

Internal invariants are `assert`s whose messages start with a spec id; a caller that passes a
malformed graph, a non-graph, or an impossible request gets `FxOracleError` with a message that
says what is wrong and, where it helps, what to do. The CLI turns it into one line and exit 2.
"""

from __future__ import annotations


class FxOracleError(Exception):
    """Bad input to fxoracle: the message says what is wrong. Never an internal bug."""


def first_line(e: BaseException) -> str:
    """The first line of `e`'s message, or `(no message)`."""
    text = str(e).strip()
    return text.splitlines()[0] if text else "(no message)"


def describe(e: BaseException) -> str:
    """`Type: first line of the message`: what every report says of an exception."""
    return f"{type(e).__name__}: {first_line(e)}"
