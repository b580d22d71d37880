"""The one exception type fxoracle raises on bad input.

Internal invariants are `assert`s whose messages start with a spec id; a caller that passes a
malformed graph, a non-graph, or an impossible request gets `FxOracleError` with a message that
says what is wrong and, where it helps, what to do. The CLI turns it into one line and exit 2.
"""

from __future__ import annotations


class FxOracleError(Exception):
    """Bad input to fxoracle: the message says what is wrong. Never an internal bug."""
