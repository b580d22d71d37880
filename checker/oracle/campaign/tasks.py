"""The tasks of a fuzz campaign: diff one random model, shrink one finding into a repro (spec
chapter 08, DIF-9, DIF-13). Their arguments and results pickle, so a process pool or a Ray
cluster can run them (`checker.oracle.pool.pool`); each leaves torch's modes as it found
them, so no model's result depends on the models a process ran before it.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from checker.io.device import on_device
from checker.oracle.campaign.randmodels import random_model
from checker.oracle.compare.divergence import Blame, Divergence, Kind
from checker.oracle.compare.run import capture_for, diff_capture, model_caches_dropped
from checker.oracle.repro.write import write_repros
from checker.oracle.sides.sides import Sides, make_sides
from reference.errors import describe


@dataclass(frozen=True, slots=True)
class Outcome:
    """One random model's diff: its name, source and divergences."""

    index: int
    name: str
    source: str
    divergences: tuple[Divergence, ...]


@dataclass(frozen=True, slots=True)
class ReproFile:
    """A repro made for a finding: the file's name and text (written by the main process)."""

    signature: str
    name: str
    text: str


def sides_for(against: str) -> Sides:
    """The sides of a campaign: every component, the hostile split policies included."""
    return make_sides(against, "all", hostile=True)


def oracle_error(seed: int, index: int, error: BaseException, label: str) -> Outcome:
    """Model (`seed`, `index`) made fxoracle itself raise: an `oracle-error` (DIF-9)."""
    model = random_model(seed, index)
    oops = Divergence(None, Kind.ORACLE_ERROR, Blame.UNKNOWN, describe(error), label)
    return Outcome(index, model.name, model.source, (oops,))


def diff_random(seed: int, index: int, sides: Sides, device: torch.device | None = None) -> Outcome:
    """Diff random model (`seed`, `index`) on `device` (default: the CPU) in the modes it was
    called in, and leave them so. An exception of fxoracle is an `oracle-error`."""
    model = random_model(seed, index)
    try:
        model = on_device(model, device)
        with model_caches_dropped():
            graph = capture_for(model, sides)
            found = (graph,) if isinstance(graph, Divergence) else diff_capture(graph, sides)
    except Exception as e:  # FxOracleError included: a generated model must be valid
        return oracle_error(seed, index, e, sides.label)
    return Outcome(index, model.name, model.source, found)


def diff_task(seed: int, index: int, against: str, device: torch.device | None = None) -> Outcome:
    """A worker's task: diff one model (the arguments pickle; the sides are built here)."""
    return diff_random(seed, index, sides_for(against), device)


def repro_task(
    seed: int, index: int, d: Divergence, against: str, device: torch.device | None = None
) -> ReproFile | None:
    """A worker's task: capture model (`seed`, `index`) again, on `device`, and shrink `d`
    into a repro (DIF-7, DIF-8); None when none can be written. Best effort: it never raises."""
    model = random_model(seed, index)
    sides = sides_for(against)
    tag = f"finding_{d.signature().replace('/', '_')}"
    try:
        model = on_device(model, device)
        with model_caches_dropped(), tempfile.TemporaryDirectory(prefix="fxoracle-") as tmp:
            graph = capture_for(model, sides)
            if isinstance(graph, Divergence):
                return None
            made = write_repros(model, graph, [d], sides, Path(tmp), tag, device=device)
            texts = [ReproFile(d.signature(), p.name, p.read_text()) for p in made.written]
    except Exception:  # shrinking is best effort: the finding keeps its source
        return None
    return texts[0] if texts else None
