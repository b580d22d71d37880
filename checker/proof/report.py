"""The checker's report: one numbered obligation per property, each with a three-state verdict
(spec chapter 06, CHK-7 and CHK-10).

`Report.ok` is true only when every obligation holds: an unknown verdict is never a pass. The
JSON form has stable keys and lists obligations in id order, so golden files stay readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

from checker.proof.verdict import Holds, Unknown, Verdict, Violated, verdict_name

CheckId = NewType("CheckId", str)

WELL_FORMED = CheckId("CHK-1")
ACYCLIC = CheckId("CHK-2")
DATAFLOW = CheckId("CHK-3")
ORDERING = CheckId("CHK-4")
SHAPES = CheckId("CHK-5")
NUMBERS = CheckId("CHK-6")
RUNTIME = CheckId("CHK-17")

NAMES: dict[CheckId, str] = {
    WELL_FORMED: "well-formed",
    ACYCLIC: "acyclic",
    DATAFLOW: "dataflow preserved",
    ORDERING: "ordering dependencies preserved",
    SHAPES: "shapes at every call",
    NUMBERS: "numbers agree",
    RUNTIME: "runs in torch's runtime",
}


@dataclass(frozen=True, slots=True)
class Obligation:
    """One checked property: its id (`CHK-n`), its name and its verdict."""

    id: CheckId
    name: str
    verdict: Verdict

    def to_json(self) -> dict[str, object]:
        """`{"id", "name", "verdict"}` plus `witness` and `model`, or `reason`."""
        found: dict[str, object] = {
            "id": self.id,
            "name": self.name,
            "verdict": verdict_name(self.verdict),
        }
        match self.verdict:
            case Violated(witness, model):
                found["witness"] = witness
                found["model"] = {name: value for name, value in model}
            case Unknown(reason):
                found["reason"] = reason
            case Holds(note):
                if note:
                    found["note"] = note
        return found

    def line(self) -> str:
        """`CHK-n name: verdict (witness or reason)`."""
        detail = ""
        match self.verdict:
            case Violated(witness, _):
                detail = f" ({witness})"
            case Unknown(reason):
                detail = f" ({reason})"
            case Holds(note):
                detail = f" ({note})" if note else ""
        return f"{self.id} {self.name}: {verdict_name(self.verdict)}{detail}"


def obligation(check: CheckId, verdict: Verdict) -> Obligation:
    """The obligation `check` with its registered name."""
    return Obligation(check, NAMES[check], verdict)


@dataclass(frozen=True, slots=True)
class Report:
    """Every obligation of one `check_transformation` call, in id order (CHK-7)."""

    obligations: tuple[Obligation, ...]

    @property
    def ok(self) -> bool:
        """True only when every obligation holds; unknown is not a pass (CHK-7)."""
        return all(isinstance(o.verdict, Holds) for o in self.obligations)

    @property
    def violations(self) -> tuple[Obligation, ...]:
        return tuple(o for o in self.obligations if isinstance(o.verdict, Violated))

    @property
    def unknowns(self) -> tuple[Obligation, ...]:
        return tuple(o for o in self.obligations if isinstance(o.verdict, Unknown))

    def verdict_of(self, check: CheckId) -> Verdict:
        """The verdict of obligation `check`."""
        found = [o.verdict for o in self.obligations if o.id == check]
        assert len(found) == 1, f"CHK-7: no single obligation {check} in the report"
        return found[0]

    def to_json(self) -> dict[str, object]:
        """`{"ok", "obligations", "violations", "unknowns"}`; the last two list ids."""
        return {
            "ok": self.ok,
            "obligations": [o.to_json() for o in self.obligations],
            "violations": [o.id for o in self.violations],
            "unknowns": [o.id for o in self.unknowns],
        }

    def render_text(self) -> str:
        """One line per obligation: `CHK-n name: verdict (witness or reason)`."""
        lines = [o.line() for o in self.obligations]
        lines.append(f"ok: {str(self.ok).lower()}")
        return "\n".join(lines) + "\n"
