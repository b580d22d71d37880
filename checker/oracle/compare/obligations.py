"""A checker violation as the oracle tells it (spec chapter 08, DIF-27): the obligation's id,
the cause where the oracle knows it, and the spec line that states it.

A violation's witness may name a more specific obligation than its own (`CHK-1 well-formed:
invoke_subgraph: CHK-15: mul_ mutates the subgraph's input input_0`): the innermost id is the
one a reader acts on, so it is the one reported and kept as evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from checker.proof.report import Obligation, Report
from checker.proof.verdict import Violated

SPECS = Path(__file__).resolve().parents[3] / "specs"
CHECKER_SPEC = "06-checker.md"
CAUSES = {
    "CHK-4": "the original's order of writes or global state lost",
    "CHK-15": "writes to an input",
    "CHK-18": "a call's operands or results share storage",
    "CHK-17": "torch's runtime rejects it",
}  # the obligations whose violation says what the pass did wrong
_ID = re.compile(r"\bCHK-\d+\b")


@dataclass(frozen=True, slots=True)
class Violation:
    """A violated obligation, told by its most specific id."""

    id: str  # the innermost `CHK-n` its witness names, else its own
    witness: str  # the witness without the ids it starts with

    @property
    def cause(self) -> str:
        """What the pass did, where the oracle knows it (`writes to an input`), or ""."""
        return CAUSES.get(self.id, "")

    def reason(self) -> str:
        """`CHK-15 violated (writes to an input): ... ; spec: specs/06-checker.md:385 ...`."""
        cause = f" ({self.cause})" if self.cause else ""
        return f"{self.id} violated{cause}: {self.witness}; spec: {spec_line(self.id)}"


def first_violation(report: Report) -> Violation | None:
    """The report's first violation (its obligations are in id order, CHK-7), or None."""
    if not report.violations:
        return None
    return violation_of(report.violations[0])


def violation_of(obligation: Obligation) -> Violation:
    verdict = obligation.verdict
    text = verdict.witness if isinstance(verdict, Violated) else str(verdict)
    ids = _ID.findall(text)
    inner = ids[-1] if ids else obligation.id
    witness = text[text.rfind(f"{inner}:") + len(inner) + 1 :] if ids else text
    return Violation(inner, " ".join(witness.split()))


def spec_line(check: str) -> str:
    """`specs/06-checker.md:385 CHK-15 A subgraph never mutates one of its inputs`, or the
    chapter and id where the spec is not installed."""
    found = _headings().get(check)
    if found is None:
        return f"spec chapter 06, {check}"
    line, title = found
    return f"specs/{CHECKER_SPEC}:{line} {check} {title}"


def _headings() -> dict[str, tuple[int, str]]:
    """`CHK-n -> (line, title)` of the checker chapter's headings."""
    try:
        lines = (SPECS / CHECKER_SPEC).read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    found: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(lines, 1):
        heading = re.match(r"### (CHK-\d+) (.*)", line)
        if heading:
            found[heading[1]] = (number, heading[2].strip())
    return found
