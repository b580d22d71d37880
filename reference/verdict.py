"""Three-state verdicts, the one vocabulary of the reference and the checker (specs chapters
03 and 06): an obligation or a rule holds, is violated with a concrete witness, or is unknown
with a reason. A timeout or an unsupported operator is never a pass and never a bug: it is
`Unknown`. `HOLDS` is the one "holds" value where nothing needs saying.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Holds:
    """The obligation is proved (or checked exhaustively); `note` says how, when that matters
    (e.g. numbers checked on the CPU for a CUDA graph)."""

    note: str = ""


@dataclass(frozen=True, slots=True)
class Violated:
    """The obligation fails; `witness` says where, `model` gives concrete symbol values if any."""

    witness: str
    model: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Unknown:
    """Neither proved nor refuted (solver timeout, unsupported operator, missing metadata)."""

    reason: str


Verdict = Holds | Violated | Unknown
Check = Holds | Violated  # one rule's check: it holds, or is violated with a witness
HOLDS = Holds()


def verdict_name(verdict: Verdict) -> str:
    """`holds`, `violated` or `unknown`: the string reports use."""
    match verdict:
        case Holds():
            return "holds"
        case Violated():
            return "violated"
        case Unknown():
            return "unknown"
