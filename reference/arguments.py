"""The public entry points check their arguments' types first (spec chapter 10, FIL-6), so a
wrong one is `FxOracleError` naming it, never an `AttributeError` from deep inside. torch takes
its arguments on trust: `fxoracle bench --size` counts this module with what torch lacks.
"""

from __future__ import annotations

from reference.errors import FxOracleError


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
