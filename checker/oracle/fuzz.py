"""`fxoracle fuzz --minutes M --seed S --out PATH`: a differential campaign on random models
(spec chapter 08, DIF-9).

Models come from `checker.oracle.randmodels` (seed S, index 0, 1, ...), built in memory, and are
diffed with every component, the hostile split policies included (`diff_random`). Divergences
are grouped by signature (component, kind, blamed side, case); the first model of each
signature, by index, is kept with its source and, with `--repro-dir`, a minimized repro. The
findings file is rewritten (atomically) after every model, so an interrupted campaign keeps what
it found. Nothing a model does stops the campaign: an exception of the oracle itself is
recorded as a finding of its own (`oracle-error`), which is a bug to fix; so is a divergence
blamed on the reference. Either makes the exit status 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from checker.io.model_file import Model
from checker.io.reports import to_json, write_atomically
from checker.oracle.compare import Sides
from checker.oracle.diff import make_sides
from checker.oracle.divergence import Blame, Divergence, Kind
from checker.oracle.protocol import CapturedGraph
from checker.oracle.randmodels import random_model
from checker.oracle.run import capture_for, diff_capture
from checker.oracle.shrink import write_repros
from reference.errors import describe
from reference.torch_version import TORCH

Progress = Callable[[str, bool], None]  # (line, final)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One random model's diff: its name, source and divergences."""

    index: int
    name: str
    source: str
    divergences: tuple[Divergence, ...]


def diff_random(
    seed: int,
    index: int,
    sides: Sides,
    repro_dir: Path | None = None,
    want_repro: Callable[[Divergence], bool] = lambda d: False,
) -> tuple[Outcome, dict[str, str]]:
    """Diff random model (`seed`, `index`); repros for the divergences `want_repro` picks,
    by signature. An exception of fxoracle itself is an `oracle-error` divergence."""
    model = random_model(seed, index)
    try:
        graph = capture_for(model, sides)
        found = (graph,) if isinstance(graph, Divergence) else diff_capture(graph, sides)
    except Exception as e:  # FxOracleError included: a generated model must be valid
        oops = Divergence(None, Kind.ORACLE_ERROR, Blame.UNKNOWN, describe(e), sides.label)
        return Outcome(index, model.name, model.source, (oops,)), {}
    repros: dict[str, str] = {}
    if repro_dir is not None and not isinstance(graph, Divergence):
        for d in found:
            if want_repro(d):
                tag = f"finding_{d.signature().replace('/', '_')}"
                written = _attempt_repro(model, graph, d, sides, repro_dir, tag)
                if written is not None:
                    repros[d.signature()] = written
    return Outcome(index, model.name, model.source, found), repros


def _attempt_repro(
    model: Model, graph: CapturedGraph, d: Divergence, sides: Sides, repro_dir: Path, tag: str
) -> str | None:
    try:
        written = write_repros(model, graph, [d], sides, repro_dir, tag)
    except Exception:  # shrinking is best effort: the finding keeps its source
        return None
    return str(written[0]) if written else None


@dataclass(slots=True)
class Campaign:
    """What a campaign has seen so far: models, divergences by blamed side, findings."""

    seed: int
    against: str
    models: int = 0
    diverging: int = 0
    by_wrong: dict[str, int] = field(default_factory=dict)
    findings: dict[str, dict[str, object]] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def is_new(self, d: Divergence) -> bool:
        return d.signature() not in self.findings and d.blame.blames_a_side

    def record(self, outcome: Outcome, repros: dict[str, str]) -> None:
        """Count `outcome` and keep the first model of every new signature."""
        self.models += 1
        self.diverging += bool(outcome.divergences)
        for d in outcome.divergences:
            self.by_wrong[d.wrong] = self.by_wrong.get(d.wrong, 0) + 1
            key = d.signature()
            if key in self.findings:
                count = self.findings[key]["count"]
                self.findings[key]["count"] = int(count) + 1 if isinstance(count, int) else 1
                continue
            self.findings[key] = {"signature": key, "count": 1, "graph": outcome.name,
                                  "divergence": d.to_json(), "source": outcome.source,
                                  "repro": repros.get(key), "fails": d.fails}  # fmt: skip

    @property
    def fxoracle_bugs(self) -> list[str]:
        """Signatures that are fxoracle's own bugs: oracle errors, the reference blamed."""
        return sorted(
            k for k, f in self.findings.items() if "/oracle-error/" in k or "/reference/" in k
        )

    def to_json(self) -> dict[str, object]:
        return {
            "seed": self.seed,
            "against": self.against,
            "torch": TORCH.version,
            "models": self.models,
            "diverging_models": self.diverging,
            "elapsed_s": round(time.monotonic() - self.started, 1),
            "by_wrong": dict(sorted(self.by_wrong.items())),
            "findings": [self.findings[k] for k in sorted(self.findings)],
        }

    def progress(self) -> str:
        elapsed = time.monotonic() - self.started
        wrong = ", ".join(f"{k} {v}" for k, v in sorted(self.by_wrong.items())) or "none"
        rate = elapsed / self.models if self.models else 0.0
        return (f"[{int(elapsed) // 60:3d}:{int(elapsed) % 60:02d}] {self.models} models, "
                f"{self.diverging} diverge | wrong: {wrong} | {len(self.findings)} signatures"
                f" | {rate:.1f} s/model")  # fmt: skip


def run_campaign(
    minutes: float,
    seed: int,
    out: Path,
    *,
    against: str = "torch",
    repro_dir: Path | None = None,
    max_models: int | None = None,
    progress: Progress | None = None,
) -> Campaign:
    """Diff random models until `minutes` pass (or `max_models` are done), writing `out`."""
    sides = make_sides(against, "all", hostile=True)
    campaign = Campaign(seed, sides.label)
    deadline = campaign.started + 60.0 * minutes
    index = 0
    while time.monotonic() < deadline and (max_models is None or index < max_models):
        outcome, repros = diff_random(seed, index, sides, repro_dir, campaign.is_new)
        campaign.record(outcome, repros)
        write_atomically(out, to_json(campaign.to_json()))
        if progress is not None:
            progress(campaign.progress(), False)
        index += 1
    if progress is not None:
        progress(campaign.progress(), True)
    return campaign
