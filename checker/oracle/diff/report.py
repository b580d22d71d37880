"""The report of `fxoracle diff`: every model's divergences and repros, as text or JSON (spec
chapter 08, DIF-10, DIF-11, DIF-12, DIF-24). A model agrees when every difference is a free
choice (both sides right); the free choices are still listed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from checker.io.out_paths import marked
from checker.oracle.compare.divergence import Blame, Divergence, Kind
from checker.oracle.sides.sides import Component
from reference.torch_version import TORCH


@dataclass(frozen=True, slots=True)
class GraphDiff:
    """The diff of one model: its divergences, the repros written for them, and why none
    could be written for the others (DIF-28)."""

    graph: str
    divergences: tuple[Divergence, ...]
    repros: tuple[str, ...] = ()
    device: str = "cpu"  # where the model's example inputs lived when captured (FIL-8)
    no_repros: tuple[str, ...] = ()

    @property
    def agree(self) -> bool:
        """No difference but free choices: both sides right wherever they differ (DIF-24)."""
        return all(d.blame is Blame.NEITHER for d in self.divergences)

    def verdict(self) -> str:
        """`agree`, `agree (2 free choices: tracker regions, sort order x3)` or `DIVERGE`."""
        if not self.agree:
            return "DIVERGE"
        if not self.divergences:
            return "agree"
        kinds = Counter(f"{d.component or 'all'} {d.kind}" for d in self.divergences)
        named = ", ".join(k if n == 1 else f"{k} x{n}" for k, n in kinds.items())
        count = len(self.divergences)
        return f"agree ({count} free choice{'' if count == 1 else 's'}: {named})"

    @property
    def fails(self) -> bool:
        """A side is blamed, or fxoracle itself failed (exit status 1)."""
        return any(d.fails for d in self.divergences)

    def to_json(self) -> dict[str, object]:
        return {"graph": self.graph, "device": self.device, "agree": self.agree,
                "repros": list(self.repros), "no_repros": list(self.no_repros),
                "divergences": [d.to_json() for d in self.divergences]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DiffReport:
    """Every graph's diff; `to_json` is one graph's object, or a list plus a summary."""

    against: str
    components: tuple[Component, ...]
    skipped: tuple[Component, ...]
    graphs: tuple[GraphDiff, ...]

    @property
    def agree(self) -> bool:
        """Every graph agrees: its only differences are free choices (DIF-24)."""
        return all(g.agree for g in self.graphs)

    @property
    def fails(self) -> bool:
        return any(g.fails for g in self.graphs)

    @property
    def device(self) -> str:
        """Where the models ran: one device, or several joined by `+` (FIL-8)."""
        found = sorted({d for g in self.graphs for d in g.device.split("+")})
        return "+".join(found) if found else "cpu"

    def fails_on(self, side: str) -> bool:
        """A divergence blames `side` (`any`, `reference` or `other`; both sides wrong counts
        for either) or fxoracle itself failed."""
        blamed = {"any": {Blame.REFERENCE, Blame.OTHER, Blame.BOTH},
                  "reference": {Blame.REFERENCE, Blame.BOTH},
                  "other": {Blame.OTHER, Blame.BOTH}}[side]  # fmt: skip
        found = [d for g in self.graphs for d in g.divergences]
        return any(d.blame in blamed or d.kind is Kind.ORACLE_ERROR for d in found)

    def to_json(self) -> dict[str, object]:
        head = marked("diff", {"against": self.against, "torch": TORCH.version,
                               "device": self.device,
                               "components": [str(c) for c in self.components],
                               "skipped": [str(c) for c in self.skipped],
                               "fails": self.fails})  # fmt: skip
        if len(self.graphs) == 1:
            return head | self.graphs[0].to_json()
        graphs = [g.to_json() for g in self.graphs]
        return head | {"agree": self.agree, "graphs": graphs, "summary": summary(self.graphs)}


def summary(graphs: Sequence[GraphDiff]) -> dict[str, object]:
    """Counts: graphs, agreeing graphs (free choices only, DIF-24), divergences by blamed side
    and by component."""
    found = [d for g in graphs for d in g.divergences]
    return {"graphs": len(graphs), "agree": sum(g.agree for g in graphs),
            "by_wrong": dict(sorted(Counter(d.wrong for d in found).items())),
            "by_component": dict(sorted(Counter(str(d.component) for d in found).items())),
            }  # fmt: skip


def render_text(report: DiffReport, debug: bool = False) -> str:
    """One line per graph (`agree`, with the free choices counted, or `DIVERGE`: DIF-24), one
    indented line per divergence, then the verdict; with `debug`, the traceback of every
    exception a side raised (DIF-12)."""
    ran = ", ".join(report.components)
    lines = [
        f"fxoracle diff: reference against {report.against} ({ran}), {TORCH.label}, {report.device}"
    ]
    if report.skipped:
        lines.append(
            f"  skipped (not implemented by {report.against}): {', '.join(report.skipped)}"
        )
    for g in report.graphs:
        lines.append(f"  {g.graph}: {g.verdict()}")
        for d in g.divergences:
            where = f" [{d.case}]" if d.case else ""
            note = d.bug_note(TORCH.label)
            lines.append(
                f"    {d.component or 'all'} {d.kind}{where}: wrong={d.wrong}{note}: {d.detail}"
            )
            if debug and d.traceback:
                lines.extend(f"      | {line}" for line in d.traceback.rstrip().splitlines())
        lines.extend(f"    repro: {repro}" for repro in g.repros)
        lines.extend(f"    no repro: {why}" for why in g.no_repros)
    lines.append(f"  agree: {str(report.agree).lower()}, fails: {str(report.fails).lower()}")
    return "\n".join(lines) + "\n"
