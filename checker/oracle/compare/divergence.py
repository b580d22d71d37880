"""A divergence between the two sides of a diff, and who is to blame (spec chapter 08, DIF-3,
DIF-4).

Closed sets, matched with `assert_never`: the kind of divergence and the blame (the component
that diverged is a `checker.oracle.sides.sides.Component`). `Blame.OTHER` is reported under the
other side's label (`torch`, `mypkg.mod:Impl`). `detail` is the text reports show; `Evidence`
holds what the blame rests on as fields, which the catalogue of torch's bugs matches on (DIF-11).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import assert_never

from checker.oracle.compare.faults import RegionFault
from checker.oracle.sides.contract import ContractError, traceback_of
from checker.oracle.sides.sides import Component, Sides
from reference.errors import first_line


class Kind(StrEnum):
    """What differs; `KINDS` says which a component can produce (DIF-23)."""

    REGIONS = "regions"  # different region groups
    GRAPH = "graph"  # different graphs: other nodes, wiring, constants or signatures
    ORDER = "order"  # the same nodes, wired the same, in another order
    CRASH = "crash"  # a side raised where the other did not, or its output raised when run
    REFUSAL = "refusal"  # a splitter refused (raised) where the other split (DIF-22)
    CONTRACT = "contract"  # a plug-in broke the plug-in contract (wrong type, erased nodes...)
    ORACLE_ERROR = "oracle-error"  # fxoracle itself raised: a bug of fxoracle (DIF-9)


_ALWAYS = frozenset({Kind.CRASH, Kind.CONTRACT, Kind.ORACLE_ERROR})
KINDS: Mapping[Component | None, frozenset[Kind]] = {
    Component.TRACKER: _ALWAYS | {Kind.REGIONS},
    Component.DEDUP: _ALWAYS | {Kind.GRAPH, Kind.ORDER},
    Component.SORT: _ALWAYS | {Kind.ORDER},
    Component.SPLIT: _ALWAYS | {Kind.GRAPH, Kind.REFUSAL},
    None: frozenset({Kind.ORACLE_ERROR}),  # before any component ran
}  # the kinds each component can produce: spec 08's table (DIF-23)


class Blame(StrEnum):
    """Which side is wrong (DIF-4)."""

    REFERENCE = "reference"
    OTHER = "other"
    BOTH = "both"  # both outputs are wrong
    NEITHER = "neither"  # both are right: the difference is a free choice
    UNKNOWN = "unknown"  # no verdict could be reached

    @property
    def blames_a_side(self) -> bool:
        """A side is wrong: the divergence fails a diff (exit status 1)."""
        match self:
            case Blame.REFERENCE | Blame.OTHER | Blame.BOTH:
                return True
            case Blame.NEITHER | Blame.UNKNOWN:
                return False
            case _:
                assert_never(self)


@dataclass(frozen=True, slots=True)
class Raised:
    """An exception a side raised: its type's name and its message's first line."""

    type: str
    message: str

    @staticmethod
    def of(error: BaseException) -> Raised:
        return Raised(type(error).__name__, first_line(error))

    @staticmethod
    def described(text: str) -> Raised:
        """From `reference.errors.describe`'s `Type: message`."""
        kind, _, message = text.partition(": ")
        return Raised(kind, message)


class RunFault(StrEnum):
    """What a run of an output showed that the original's did not."""

    VALUES = "values"  # different values, or a different number of outputs
    GRAD = "grad"  # an output's `requires_grad`, or the grad mode after the call


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a blame rests on, as fields: the blamed side's (the other side's when both are
    wrong), and why the two sides differ where that is known."""

    raised: Raised | None = None  # the side raised: in its pass, or when its output ran
    run: RunFault | None = None  # a run of its output differs from the original's
    violated: str = ""  # the checker obligation its output violates (`CHK-4`)
    fault: RegionFault | None = None  # what is wrong with its region groups, or its key's
    refusals: tuple[str, ...] = ()  # the invariants of the reference's refusals, in order
    taken_over: bool = False  # the reference kept a region by RPL-17's operand rule
    torch_rules: tuple[str, ...] = ()  # `Policy` fields with which the reference gives its graph
    same_meaning: bool = False  # both outputs mean the same; a run tells them apart


NO_EVIDENCE = Evidence()


@dataclass(frozen=True, slots=True)
class Blamed:
    """Which side is wrong, the detail a report shows, and the evidence (the blamed side's)."""

    blame: Blame
    detail: str
    evidence: Evidence = NO_EVIDENCE


@dataclass(frozen=True, slots=True)
class Divergence:
    """One difference between the sides and its blame; `other` is the other side's label,
    `case` the split case or sort scramble ("" for model-level components)."""

    component: Component | None  # None: before any component ran (an oracle error)
    kind: Kind
    blame: Blame
    detail: str
    other: str
    case: str = ""
    bug: str = ""  # the catalogued torch bug it is (`checker.oracle.compare.known_bugs`), if any
    known: bool = False  # the bug was already known for the installed torch
    traceback: str = ""  # of the exception a side raised, for its author (DIF-12)
    evidence: Evidence = NO_EVIDENCE

    def __post_init__(self) -> None:
        assert self.kind in KINDS[self.component], (
            f"DIF-23: {self.component or 'all'} cannot diverge by {self.kind}"
        )

    @property
    def wrong(self) -> str:
        """The blamed side as reports name it: `reference`, the other side's label, `both`,
        `neither` or `unknown`."""
        return self.other if self.blame is Blame.OTHER else str(self.blame)

    @property
    def fails(self) -> bool:
        """Blames a side, or is a bug of fxoracle itself (DIF-9)."""
        return self.blame.blames_a_side or self.kind is Kind.ORACLE_ERROR

    def signature(self) -> str:
        """Divergences with one signature are one finding: `component/kind/wrong/case`."""
        component = "all" if self.component is None else str(self.component)
        return "/".join((component, str(self.kind), self.wrong, self.case))

    def to_json(self) -> dict[str, object]:
        detail = f"[{self.case}] {self.detail}" if self.case else self.detail
        component = "all" if self.component is None else str(self.component)
        found: dict[str, object] = {"component": component, "kind": str(self.kind),
                                    "wrong": self.wrong, "detail": detail}  # fmt: skip
        if self.bug:
            found["bug"] = self.bug
            found["known_for_this_torch"] = self.known
        if self.traceback:
            found["traceback"] = self.traceback
        return found

    def bug_note(self, torch_label: str) -> str:
        """`[B1, known in torch 2.13.0]`, `[N3, new for torch 2.15.0]`, or ""."""
        if not self.bug:
            return ""
        state = "known in" if self.known else "new for"
        return f" [{self.bug}, {state} {torch_label}]"


def divergence(
    sides: Sides, component: Component, kind: Kind, blamed: Blamed, case: str = "",
    error: BaseException | None = None,
) -> Divergence:  # fmt: skip
    """A divergence between `sides`, with the traceback of `error`, the exception a side raised
    (DIF-12)."""
    trace = "" if error is None else traceback_of(error)
    return Divergence(component, kind, blamed.blame, blamed.detail, sides.label, case,
                      traceback=trace, evidence=blamed.evidence)  # fmt: skip


def told(e: BaseException) -> str:
    """`Type: message`, the whole message on one line: a report never cuts it mid-value (a
    printed tensor's first line is not the message); a bare one names the function that raised
    it, as `first_line` does (torch 2.11 and 2.12 assert bare in their sort)."""
    try:
        text = " ".join(str(e).split())
    except Exception:  # a user's exception whose __str__ fails: first_line says so
        text = ""
    return f"{type(e).__name__}: {text or first_line(e)}"


def crashed(sides: Sides, component: Component, e: BaseException, case: str = "") -> Divergence:
    """The other side raised `e` where the reference did not."""
    blamed = Blamed(Blame.OTHER, f"{sides.label} raised {told(e)}", Evidence(Raised.of(e)))
    return divergence(sides, component, Kind.CRASH, blamed, case, e)


def broke(sides: Sides, component: Component, e: ContractError, case: str = "") -> Divergence:
    """The other side broke the plug-in contract: its fault, never fxoracle's (DIF-12)."""
    return divergence(sides, component, Kind.CONTRACT, Blamed(Blame.OTHER, str(e)), case)
