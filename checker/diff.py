"""The differential oracle's driver and its report (spec chapter 08, DIF).

`run_diff(paths, against, component, random, seed, repro_dir)` captures each model file (and
`random` generated ones), runs both sides on the same input component by component
(`checker.compare`: tracker, dedup, sort, split), and for every divergence says which side is
wrong: each side's output is run against the original and given to
`checker.check.check_transformation` (`checker.judge`). With `repro_dir`, the first blamed
divergence of a model is shrunk into a standalone repro (`checker.shrink`). Nothing raised
inside a side stops the diff: it becomes a `crash` divergence; an exception of the oracle
itself becomes an `oracle-error` one. The report is text (`render_text`) or JSON (`to_json`).
"""

from __future__ import annotations

import tempfile
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from checker.cases import HOSTILE_SPLIT_CASES, SPLIT_CASES

# Divergence, Sides, sort_case and split_case are re-exported: the fuzz campaign, the tests
# and the repros written by `checker.shrink` import them from here
from checker.compare import COMPARE, COMPONENTS, reference_capture
from checker.compare import Divergence as Divergence
from checker.compare import Sides as Sides
from checker.compare import sort_case as sort_case
from checker.compare import split_case as split_case
from checker.impls import label_of, load_impl, parts_of
from checker.judge import attempt, error_line
from reference.errors import FxOracleError


@dataclass(frozen=True, slots=True)
class GraphDiff:
    """The diff of one model: its divergences and, if one was shrunk, the repro's path."""

    graph: str
    divergences: tuple[Divergence, ...]
    repro: str | None = None
    source: str | None = field(default=None, compare=False)  # generated models only

    @property
    def agree(self) -> bool:
        return not self.divergences

    def to_json(self) -> dict[str, object]:
        return {"graph": self.graph, "agree": self.agree, "repro": self.repro,
                "divergences": [d.to_json() for d in self.divergences]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DiffReport:
    """Every graph's diff; `to_json` is one graph's object, or a list plus a summary."""

    against: str
    component: str
    graphs: tuple[GraphDiff, ...]

    @property
    def agree(self) -> bool:
        return all(g.agree for g in self.graphs)

    def to_json(self) -> dict[str, object]:
        if len(self.graphs) == 1:
            return {"against": self.against, **self.graphs[0].to_json()}
        graphs = [g.to_json() for g in self.graphs]
        return {"against": self.against, "agree": self.agree, "graphs": graphs,
                "summary": summary(self.graphs)}  # fmt: skip


def summary(graphs: Sequence[GraphDiff]) -> dict[str, object]:
    """Counts: graphs, agreeing graphs, divergences by wrong side and by component."""
    found = [d for g in graphs for d in g.divergences]
    return {"graphs": len(graphs), "agree": sum(g.agree for g in graphs),
            "by_wrong": dict(sorted(Counter(d.wrong for d in found).items())),
            "by_component": dict(sorted(Counter(d.component for d in found).items()))}  # fmt: skip


def render_text(report: DiffReport) -> str:
    """One line per graph, one indented line per divergence, then the verdict."""
    lines = [f"fxoracle diff: reference against {report.against} ({report.component})"]
    for g in report.graphs:
        lines.append(f"  {g.graph}: {'agree' if g.agree else 'DIVERGE'}")
        for d in g.divergences:
            where = f" [{d.case}]" if d.case else ""
            lines.append(f"    {d.component} {d.kind}{where}: wrong={d.wrong}: {d.detail}")
        if g.repro:
            lines.append(f"    repro: {g.repro}")
    lines.append(f"  agree: {str(report.agree).lower()}")
    return "\n".join(lines) + "\n"


def make_sides(against: str, component: str = "all", hostile: bool = False) -> Sides:
    """Load `against` and choose the components both sides implement (DIF-1)."""
    from checker.impls import ReferenceImpl

    if component != "all" and component not in COMPONENTS:
        raise FxOracleError(f"unknown component {component!r}: {', '.join(COMPONENTS)} or all")
    other = load_impl(against)
    wanted = COMPONENTS if component == "all" else (component,)
    chosen = tuple(c for c in wanted if c in parts_of(other))
    if not chosen:
        raise FxOracleError(f"--against {against} implements no part of component {component}")
    cases = SPLIT_CASES + (HOSTILE_SPLIT_CASES if hostile else ())
    return Sides(ReferenceImpl(), other, against, label_of(other, against), chosen, cases)


def run_diff(
    paths: Sequence[Path],
    against: str,
    component: str = "all",
    random: int = 0,
    seed: int = 0,
    repro_dir: Path | None = None,
) -> DiffReport:
    """Diff every model file of `paths` and `random` generated models (DIF-1..DIF-10)."""
    from checker.randmodels import random_source

    if not paths and random <= 0:
        raise FxOracleError("nothing to compare: give model files or --random N")
    sides = make_sides(against, component)
    graphs = [diff_file(Path(p), sides, repro_dir) for p in paths]
    with tempfile.TemporaryDirectory(prefix="fxoracle-random-") as tmp:
        for i in range(random):
            name = f"random_{seed}_{i}"
            source = random_source(seed, i)
            path = Path(tmp) / f"{name}.py"
            path.write_text(source)
            graphs.append(diff_file(path, sides, repro_dir, name=name, source=source))
    return DiffReport(label_of(sides.other, against), component, tuple(graphs))


def diff_file(
    path: Path, sides: Sides, repro_dir: Path | None = None, *, name: str = "",
    source: str | None = None,
) -> GraphDiff:  # fmt: skip
    """All chosen components on one model file, then a repro of the first blamed divergence."""
    if not path.is_file():
        raise FxOracleError(f"{path}: no such file")
    found = diff_components(path, sides)
    repro = None
    if repro_dir is not None and found:
        from checker.shrink import write_repro

        repro = write_repro(path, found, sides, repro_dir)
    return GraphDiff(name or path.name, found, None if repro is None else str(repro), source)


def diff_components(path: Path, sides: Sides) -> tuple[Divergence, ...]:
    """The divergences of every chosen component on `path` (a side's crash included)."""
    for side in (sides.reference, sides.other):
        forget = getattr(side, "forget", None)
        if callable(forget):
            forget()  # a file may be rewritten between calls (shrinking)
    ours = attempt(lambda: reference_capture(path, sides))
    if isinstance(ours, Exception):
        return (_reference_failed(path, sides, ours),)
    found: list[Divergence] = []
    for component in sides.components:
        try:
            found += COMPARE[component](path, sides)
        except Exception as e:  # a bug of the oracle itself: reported, never a crash
            where = traceback.extract_tb(e.__traceback__)[-1]
            at = f" at {Path(where.filename).name}:{where.lineno}"
            found.append(Divergence(component, "oracle-error", "unknown", error_line(e) + at))
    return tuple(found)


def _reference_failed(path: Path, sides: Sides, error: Exception) -> Divergence:
    """The reference could not capture or deduplicate `path`: bad input if torch cannot
    capture it either (or the file does not load), else a crash of the reference."""
    text = error_line(error)
    loading = isinstance(error, FxOracleError) and str(error).startswith(f"{path}:")
    if loading:
        raise error
    from checker.impls import TorchImpl

    if isinstance(attempt(lambda: TorchImpl().find_regions(path)), Exception):
        raise FxOracleError(f"{path}: neither side can capture it: {text}") from error
    component = "dedup" if "dedup" in sides.components else sides.components[0]
    return Divergence(component, "crash", "reference", f"reference raised {text}")
