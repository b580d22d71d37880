"""The differential oracle's driver and its report (spec chapter 08, DIF).

`run_diff(models, against, ...)` captures each model once (`reference.dynamo.capture.capture`:
Dynamo, deduplication on, the pass replaced by a recorder), hands every component of both sides its
own copy of that capture (`checker.oracle.compare`), and for every divergence says which side is
wrong. With `repro_dir`, each blamed divergence kind of each component is shrunk into a
standalone repro (`checker.oracle.shrink`). Nothing raised inside a side stops the diff: it is
judged like a wrong output; an exception of the oracle itself becomes an `oracle-error`
divergence (a bug of fxoracle, DIF-9). The report is text (`render_text`) or JSON (`to_json`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from checker.io.model_file import Model
from checker.oracle.cases import HOSTILE_SPLIT_CASES, SPLIT_CASES
from checker.oracle.compare import Sides
from checker.oracle.divergence import COMPONENTS, Blame, Component, Divergence, Kind
from checker.oracle.impls import ReferenceImpl, label_of, load_impl
from checker.oracle.interrupts import interrupts_noted
from checker.oracle.known_bugs import classified
from checker.oracle.protocol import parts_of
from checker.oracle.randmodels import random_model
from checker.oracle.repro_run import Prover
from checker.oracle.run import capture_for, diff_capture, model_caches_dropped
from checker.oracle.shrink import write_repros
from reference.errors import FxOracleError
from reference.torch_version import TORCH

Progress = Callable[["GraphDiff", int], None]  # (the model just diffed, how many in all)


@dataclass(frozen=True, slots=True)
class GraphDiff:
    """The diff of one model: its divergences and the repros written for them."""

    graph: str
    divergences: tuple[Divergence, ...]
    repros: tuple[str, ...] = ()

    @property
    def agree(self) -> bool:
        return not self.divergences

    @property
    def fails(self) -> bool:
        """A side is blamed, or fxoracle itself failed (exit status 1)."""
        return any(d.fails for d in self.divergences)

    def to_json(self) -> dict[str, object]:
        return {"graph": self.graph, "agree": self.agree, "repros": list(self.repros),
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
        return all(g.agree for g in self.graphs)

    @property
    def fails(self) -> bool:
        return any(g.fails for g in self.graphs)

    def fails_on(self, side: str) -> bool:
        """A divergence blames `side` (`any`, `reference` or `other`; both sides wrong counts
        for either) or fxoracle itself failed."""
        blamed = {"any": {Blame.REFERENCE, Blame.OTHER, Blame.BOTH},
                  "reference": {Blame.REFERENCE, Blame.BOTH},
                  "other": {Blame.OTHER, Blame.BOTH}}[side]  # fmt: skip
        found = [d for g in self.graphs for d in g.divergences]
        return any(d.blame in blamed or d.kind is Kind.ORACLE_ERROR for d in found)

    def to_json(self) -> dict[str, object]:
        head = {"against": self.against, "torch": TORCH.version,
                "components": [str(c) for c in self.components],
                "skipped": [str(c) for c in self.skipped], "fails": self.fails}  # fmt: skip
        if len(self.graphs) == 1:
            return head | self.graphs[0].to_json()
        graphs = [g.to_json() for g in self.graphs]
        return head | {"agree": self.agree, "graphs": graphs, "summary": summary(self.graphs)}


def summary(graphs: Sequence[GraphDiff]) -> dict[str, object]:
    """Counts: graphs, agreeing graphs, divergences by blamed side and by component."""
    found = [d for g in graphs for d in g.divergences]
    return {"graphs": len(graphs), "agree": sum(g.agree for g in graphs),
            "by_wrong": dict(sorted(Counter(d.wrong for d in found).items())),
            "by_component": dict(sorted(Counter(str(d.component) for d in found).items())),
            }  # fmt: skip


def render_text(report: DiffReport, debug: bool = False) -> str:
    """One line per graph, one indented line per divergence, then the verdict; with `debug`,
    the traceback of every exception a side raised (DIF-12)."""
    ran = ", ".join(report.components)
    lines = [f"fxoracle diff: reference against {report.against} ({ran}), {TORCH.label}"]
    if report.skipped:
        lines.append(
            f"  skipped (not implemented by {report.against}): {', '.join(report.skipped)}"
        )
    for g in report.graphs:
        lines.append(f"  {g.graph}: {'agree' if g.agree else 'DIVERGE'}")
        for d in g.divergences:
            where = f" [{d.case}]" if d.case else ""
            note = d.bug_note(TORCH.label)
            lines.append(
                f"    {d.component or 'all'} {d.kind}{where}: wrong={d.wrong}{note}: {d.detail}"
            )
            if debug and d.traceback:
                lines.extend(f"      | {line}" for line in d.traceback.rstrip().splitlines())
        lines.extend(f"    repro: {repro}" for repro in g.repros)
    lines.append(f"  agree: {str(report.agree).lower()}, fails: {str(report.fails).lower()}")
    return "\n".join(lines) + "\n"


def make_sides(
    against: str, component: str = "all", hostile: bool = False, strict_order: bool = False
) -> Sides:
    """Load `against` and choose the components both sides implement (DIF-1)."""
    if component != "all" and component not in COMPONENTS:
        raise FxOracleError(f"unknown component {component!r}: {', '.join(COMPONENTS)} or all")
    other = load_impl(against)
    wanted = COMPONENTS if component == "all" else (Component(component),)
    chosen = tuple(c for c in wanted if c in parts_of(other))
    if not chosen:
        raise FxOracleError(f"--against {against} implements no part of component {component}")
    cases = SPLIT_CASES + (HOSTILE_SPLIT_CASES if hostile else ())
    return Sides(ReferenceImpl(), other, against, label_of(against), chosen, cases, strict_order)


def skipped_components(sides: Sides, component: str) -> tuple[Component, ...]:
    """The components asked for that the other side does not implement."""
    wanted = COMPONENTS if component == "all" else (Component(component),)
    return tuple(c for c in wanted if c not in sides.components)


def run_diff(
    models: Sequence[Model],
    against: str,
    component: str = "all",
    random: int = 0,
    seed: int = 0,
    repro_dir: Path | None = None,
    progress: Progress | None = None,
    *,
    strict_order: bool = False,
) -> DiffReport:
    """Diff every model of `models` and `random` generated ones (DIF-1..DIF-12)."""
    if not models and random <= 0:
        raise FxOracleError("nothing to compare: give model files or --random N")
    sides = make_sides(against, component, strict_order=strict_order)
    everything = [*models, *(random_model(seed, i) for i in range(random))]
    graphs = []
    # one prover for the run: its interpreter imports torch once for every repro (DIF-15)
    with interrupts_noted() as interrupted, closing(Prover()) as prover:
        for model in everything:  # a Ctrl-C torch swallowed still stops the diff
            graphs.append(diff_model(model, sides, repro_dir, prover))
            if interrupted.is_set():
                raise KeyboardInterrupt
            if progress is not None:
                progress(graphs[-1], len(everything))
    return DiffReport(sides.label, sides.components, skipped_components(sides, component),
                      tuple(graphs))  # fmt: skip


def diff_model(
    model: Model, sides: Sides, repro_dir: Path | None = None, prover: Prover | None = None
) -> GraphDiff:
    """All chosen components on one model, then a repro per blamed divergence kind, proved by
    `prover` (or one of its own)."""
    with model_caches_dropped():
        return _diff_model(model, sides, repro_dir, prover)


def _diff_model(
    model: Model, sides: Sides, repro_dir: Path | None, prover: Prover | None
) -> GraphDiff:
    graph = capture_for(model, sides)
    if isinstance(graph, Divergence):
        found: tuple[Divergence, ...] = classified((graph,))
    else:
        found = classified(diff_capture(graph, sides))
    repros: tuple[str, ...] = ()
    if repro_dir is not None and found and not isinstance(graph, Divergence):
        written = write_repros(model, graph, found, sides, repro_dir, prover=prover)
        repros = tuple(str(p) for p in written)
    return GraphDiff(model.name, found, repros)
