"""Minimized repros, written once proved (spec chapter 08, DIF-7, DIF-8, DIF-15).

`write_repros` writes, per blamed divergence kind of each component, a standalone file that
rebuilds a small model or graph and fails with an `AssertionError` on the wrong side (its text:
`checker.oracle.repro.text`): against torch, using only torch; against the reference or a
user's implementation, by running the oracle on itself. The model's source is shrunk
(`source_reduce`) for the model-level components, the graph (`graph_reduce`) for the
graph-level ones, keeping the divergence: same component, kind and blamed side. Every candidate
is built in memory (`model_tried`), never written to a file, and tried in this process
(fast); a repro is written only once a fresh interpreter proved that running it raises
`AssertionError` (`checker.oracle.repro.prover`, DIF-15). When the shrunk one does not, a
statement with a process-wide effect was shrunk away, and the source is shrunk again with every
accepted candidate proved that way. Its header describes the shrunk case, not the original one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.fx

from checker.io.device import on_device
from checker.io.model_file import Model, model_tried
from checker.io.reports import write_atomically
from checker.oracle.compare.divergence import Divergence
from checker.oracle.compare.graph_level import sort_case, split_case
from checker.oracle.compare.run import capture_for, diff_capture
from checker.oracle.repro.graph_reduce import shrink_graph
from checker.oracle.repro.prover import Prover, fails_here
from checker.oracle.repro.source_reduce import shrink_source, strip_metadata
from checker.oracle.repro.text import graph_repro, model_repro
from checker.oracle.sides.cases import parse_split_case
from checker.oracle.sides.sides import Component, Sides
from checker.proof.runs import run
from reference.dynamo.capture import Capture

ORDER = (Component.DEDUP, Component.TRACKER, Component.SPLIT, Component.SORT)


@dataclass(frozen=True, slots=True)
class Repros:
    """The repros written, and for each blamed divergence none could be written for,
    `<component> <kind> [case], wrong=<side>: why` (DIF-28)."""

    written: tuple[Path, ...] = ()
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NoRepro:
    """Why no repro of a divergence could be written."""

    why: str


UNPROVED = "the repro did not fail with AssertionError in a fresh interpreter"


def write_repros(
    model: Model, graph: Capture, found: Sequence[Divergence], sides: Sides,
    repro_dir: Path, tag: str = "", prover: Prover | None = None,
    device: torch.device | None = None,
) -> Repros:  # fmt: skip
    """One repro per blamed (component, kind, blame) of `found`, named
    `<model>_<tag or component>[_<n>]_repro.py` (DIF-8) and written only once proved standalone
    (DIF-15, by `prover`, or one of its own); for those none can be written for, why (DIF-28).
    `device` is the run's `--device`: each candidate and the repro move there (FIL-16)."""
    if prover is None:
        with closing(Prover()) as own:
            return write_repros(model, graph, found, sides, repro_dir, tag, own, device)
    written: list[Path] = []
    missing: list[str] = []
    for d in _to_repro(found):
        stem = _stem(model.name, tag or str(d.component), written, repro_dir)
        text = _repro_text(model, graph, d, Proving(sides, prover, device))
        if isinstance(text, NoRepro):
            missing.append(f"{no_repro_label(d)}: {text.why}")
            continue
        target = repro_dir / f"{stem}_repro.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, text)
        written.append(target)
    return Repros(tuple(written), tuple(missing))


def _to_repro(found: Sequence[Divergence]) -> list[Divergence]:
    """The first blamed divergence of each (component, kind, blamed side), model-level first."""
    chosen: dict[tuple[str, str, str], Divergence] = {}
    for d in sorted(found, key=lambda d: ORDER.index(d.component) if d.component else 0):
        if d.blame.blames_a_side:
            chosen.setdefault((str(d.component), str(d.kind), d.wrong), d)
    return list(chosen.values())


def no_repro_label(d: Divergence) -> str:
    """`split graph [case], wrong=X`: which divergence a missing repro is of."""
    case = f" [{d.case}]" if d.case else ""
    return f"{d.component or 'all'} {d.kind}{case}, wrong={d.wrong}"


def not_captured(found: Sequence[Divergence]) -> Repros:
    """No repro for any blamed divergence of a model that could not be captured (DIF-28)."""
    why = "the model was not captured, so there is no graph to shrink"
    return Repros(missing=tuple(f"{no_repro_label(d)}: {why}" for d in _to_repro(found)))


def _stem(name: str, tag: str, written: Sequence[Path], repro_dir: Path) -> str:
    """`<model>_<tag>`, the model's name without `.py` and with `/` as `__`: two models named
    `model.py` in different folders are named by their folders too, so their repros differ
    (DIF-15)."""
    stem = f"{name.removesuffix('.py').replace('/', '__')}_{tag}"
    taken = {p.name for p in written}
    k = 1
    candidate = stem
    while f"{candidate}_repro.py" in taken:
        k += 1
        candidate = f"{stem}_{k}"
    return candidate


def _same(d: Divergence) -> Callable[[Sequence[Divergence]], bool]:
    key = (d.component, d.kind, d.blame)
    return lambda ds: any((e.component, e.kind, e.blame) == key for e in ds)


@dataclass(frozen=True, slots=True)
class Proving:
    """The sides a repro is made for, the prover of its texts and the run's `--device`."""

    sides: Sides
    prover: Prover
    device: torch.device | None = None


def _repro_text(model: Model, graph: Capture, d: Divergence, how: Proving) -> str | NoRepro:
    """The text of a repro of `d` that a fresh interpreter proved to fail (DIF-15), or why
    there is none."""
    sides = how.sides
    if d.component in (Component.TRACKER, Component.DEDUP):
        return _model_repro_text(strip_metadata(model.source), d, how)
    graph_keeps = _graph_keeps(d, sides, graph.example_inputs)
    small_gm = shrink_graph(graph.gm, graph_keeps)
    shrunk_d = next((e for e in _graph_case(small_gm, graph.example_inputs, d, sides)
                     if _same(d)([e])), d)  # fmt: skip
    text = graph_repro(small_gm, graph.example_inputs, shrunk_d, sides)
    if text is None:
        return NoRepro("the graph cannot be written as source (a target or constant with no "
                       "importable name)")  # fmt: skip
    return text if how.prover.fails(text) else NoRepro(UNPROVED)


def _model_repro_text(source: str, d: Divergence, how: Proving) -> str | NoRepro:
    """Shrunk with candidates tried here and the result proved in a fresh interpreter; when
    the proof fails, a statement with a process-wide effect looked removable: shrunk again with
    every accepted candidate proved (slower: a process each)."""
    text = _shrunk_model_repro(source, d, how, prove=lambda _: True)
    if text is None:
        return NoRepro("the model rebuilt from its source no longer diverges so, or its repro "
                       "does not fail here")  # fmt: skip
    if how.prover.fails(text):
        return text
    proved = _shrunk_model_repro(source, d, how, prove=how.prover.fails)
    return NoRepro(UNPROVED) if proved is None else proved


def _shrunk_model_repro(
    source: str, d: Divergence, how: Proving, prove: Callable[[str], bool]
) -> str | None:
    """The repro of `source` shrunk while the divergence and the repro's failure stay, each
    accepted candidate's repro also judged by `prove`; None when not even `source` keeps."""
    diverges = _model_keeps(d, how.sides, how.device)
    accepted: dict[str, str] = {}

    def keeps(candidate: str) -> bool:  # the divergence stays, and so does the failure
        found = diverges(candidate)
        text = None if found is None else model_repro(candidate, found, how.sides, how.device)
        if text is None or not fails_here(text) or not prove(text):
            return False
        accepted[candidate] = text
        return True

    small = shrink_source(source, keeps)
    if small in accepted:
        return accepted[small]
    return accepted[source] if keeps(source) else None


def _model_keeps(
    d: Divergence, sides: Sides, device: torch.device | None
) -> Callable[[str], Divergence | None]:
    """The candidate's divergence of `d`'s kind, on `device`, or None when it has none (or
    fails to load or move)."""
    only = sides.only(d.component) if d.component is not None else sides

    def keeps(source: str) -> Divergence | None:
        try:
            with model_tried("candidate", source) as candidate:
                graph = capture_for(on_device(candidate, device), only)
                found = (graph,) if isinstance(graph, Divergence) else diff_capture(graph, only)
        except Exception:  # the candidate does not load or capture: not kept
            return None
        return next((e for e in found if _same(d)([e])), None)

    return keeps


def _graph_keeps(
    d: Divergence, sides: Sides, inputs: tuple[Any, ...]
) -> Callable[[torch.fx.GraphModule], bool]:
    def keeps(gm: torch.fx.GraphModule) -> bool:
        try:
            if isinstance(run(gm, inputs), str):  # the candidate must be a valid graph
                return False
            return _same(d)(_graph_case(gm, inputs, d, sides))
        except Exception:
            return False

    return keeps


def _graph_case(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], d: Divergence, sides: Sides
) -> list[Divergence]:
    if d.component is Component.SORT:
        return sort_case(gm, sides, d.case)
    return split_case(gm, inputs, sides, parse_split_case(d.case))
