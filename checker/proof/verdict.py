"""The checker's verdicts are the reference's (`reference.verdict`): one vocabulary. Two ways to
combine them: `first_failure` runs checks in order and keeps the first that does not hold,
`prefixed` says where a verdict was found."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from reference.verdict import HOLDS, Holds, Unknown, Verdict, Violated, verdict_name

__all__ = [
    "HOLDS",
    "Holds",
    "Unknown",
    "Verdict",
    "Violated",
    "first_failure",
    "prefixed",
    "verdict_name",
]


def first_failure(*checks: Callable[[], Verdict]) -> Verdict:
    """The first of `checks`' verdicts that is not `Holds`, the later checks not run; HOLDS
    when every one holds."""
    for check in checks:
        found = check()
        if not isinstance(found, Holds):
            return found
    return HOLDS


def prefixed(prefix: str, verdict: Verdict) -> Verdict:
    """`verdict` with `prefix` before its witness or reason; a `Holds` as it is."""
    match verdict:
        case Violated():
            return replace(verdict, witness=prefix + verdict.witness)
        case Unknown():
            return Unknown(prefix + verdict.reason)
    return verdict
