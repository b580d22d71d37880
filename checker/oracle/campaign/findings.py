"""A fuzz campaign's record: models seen, divergences by blamed side, and the first model of
every signature, recorded in index order (spec chapter 08, DIF-9, DIF-13); and a campaign
file continued, never written over (DIF-16).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from checker.io.bounds import load_json
from checker.io.out_paths import is_stream, marked
from checker.io.reports import write_atomically
from checker.oracle.campaign.tasks import Outcome, ReproFile
from checker.oracle.compare.divergence import Blame, Divergence, Kind
from reference.errors import FxOracleError
from reference.torch_version import TORCH

Progress = Callable[["Campaign", bool], None]  # (campaign so far, final)


@dataclass(frozen=True, slots=True)
class Finding:
    """The first model of one signature (`Divergence.signature`), and how many divergences
    had it; `divergence` is that first divergence as reports write it."""

    signature: str
    kind: Kind
    wrong: str  # the blamed side as reports name it (`Divergence.wrong`)
    count: int
    graph: str  # the model's name
    divergence: dict[str, object]
    source: str  # the model's source
    repro: str | None  # the repro's path, once written
    fails: bool  # `Divergence.fails`

    @property
    def fxoracle_bug(self) -> bool:
        """fxoracle's own bug: an oracle error, or the reference blamed (DIF-9)."""
        return self.kind is Kind.ORACLE_ERROR or self.wrong == str(Blame.REFERENCE)

    @staticmethod
    def first(d: Divergence, graph: str, source: str) -> Finding:
        return Finding(d.signature(), d.kind, d.wrong, 1, graph, d.to_json(), source, None,
                       d.fails)  # fmt: skip

    def to_json(self) -> dict[str, object]:
        return {"signature": self.signature, "count": self.count, "graph": self.graph,
                "divergence": self.divergence, "source": self.source, "repro": self.repro,
                "fails": self.fails}  # fmt: skip

    @staticmethod
    def of_json(data: dict[str, Any]) -> Finding:
        """The finding a findings file holds (`KeyError`, `TypeError`, `ValueError` when not)."""
        divergence = dict(data["divergence"])
        repro = data["repro"]
        return Finding(str(data["signature"]), Kind(divergence["kind"]), str(divergence["wrong"]),
                       _count(data["count"]), str(data["graph"]), divergence, str(data["source"]),
                       None if repro is None else str(repro), bool(data["fails"]))  # fmt: skip


@dataclass(slots=True)
class Campaign:
    """What a campaign has seen so far: models, divergences by blamed side, findings."""

    seed: int
    against: str  # the side's label, as reports name it
    models: int = 0
    diverging: int = 0
    by_wrong: dict[str, int] = field(default_factory=dict)
    findings: dict[str, Finding] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    side: str = ""  # `--against` as given (`torch-simple` is labelled `torch`)
    earlier_s: float = 0.0  # time spent by the runs this one continues
    device: str = "cpu"  # where its models ran (`--device`, FIL-8)

    def elapsed(self) -> float:
        return self.earlier_s + time.monotonic() - self.started

    def record(self, outcome: Outcome) -> list[tuple[int, Divergence]]:
        """Count `outcome`, which must be model `self.models` (DIF-13: in index order), and
        keep the first model of every new signature. Returns the new signatures that blame a
        side, with the model's index: those a repro is made for."""
        assert outcome.index == self.models, f"DIF-13: model {outcome.index} out of order"
        self.models += 1
        self.diverging += any(d.blame is not Blame.NEITHER for d in outcome.divergences)
        new: list[tuple[int, Divergence]] = []
        for d in outcome.divergences:
            self.by_wrong[d.wrong] = self.by_wrong.get(d.wrong, 0) + 1
            key = d.signature()
            if key in self.findings:
                earlier = self.findings[key]
                self.findings[key] = replace(earlier, count=earlier.count + 1)
                continue
            self.findings[key] = Finding.first(d, outcome.name, outcome.source)
            if d.blame.blames_a_side:
                new.append((outcome.index, d))
        return new

    def keep_repro(self, repro: ReproFile, repro_dir: Path) -> None:
        """Write `repro` into `repro_dir` and name it in its finding."""
        path = repro_dir / repro.name
        repro_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(path, repro.text)
        self.findings[repro.signature] = replace(self.findings[repro.signature], repro=str(path))

    @property
    def other_blamed(self) -> list[str]:
        """Signatures that blame the side under test (alone or with the reference)."""
        return sorted(k for k, f in self.findings.items() if f.fails and f.wrong in
                      (self.against, "both"))  # fmt: skip

    @property
    def fxoracle_bugs(self) -> list[str]:
        """Signatures that are fxoracle's own bugs: oracle errors, the reference blamed."""
        return sorted(k for k, f in self.findings.items() if f.fxoracle_bug)

    def to_json(self) -> dict[str, object]:
        return marked(
            "fuzz",
            {
                "seed": self.seed,
                "against": self.against,
                "torch": TORCH.version,
                "device": self.device,
                "models": self.models,
                "diverging_models": self.diverging,
                "side": self.side or self.against,
                "elapsed_s": round(self.elapsed(), 1),
                "by_wrong": dict(sorted(self.by_wrong.items())),
                "findings": [self.findings[k].to_json() for k in sorted(self.findings)],
            },
        )

    def progress(self) -> str:
        elapsed = self.elapsed()
        wrong = ", ".join(f"{k} {v}" for k, v in sorted(self.by_wrong.items())) or "none"
        rate = elapsed / self.models if self.models else 0.0
        return (f"[{int(elapsed) // 60:3d}:{int(elapsed) % 60:02d}] {self.models} models, "
                f"{self.diverging} diverge | wrong: {wrong} | {len(self.findings)} signatures"
                f" | {rate:.1f} s/model")  # fmt: skip


def continued(out: Path, seed: int, side: str, label: str, device: str = "cpu") -> Campaign:
    """The campaign to run: the one `out` holds, to go on from its next model, or a new one
    when there is no file (or an empty one, or `out` is a stream). `FxOracleError` when `out`
    holds anything else, or a campaign of another seed, side, torch or device: nothing is ever
    written over (DIF-16, FIL-8, FIL-18)."""
    if not out.exists() or is_stream(out) or out.stat().st_size == 0:  # `touch`ed: FIL-18
        return Campaign(seed, label, side=side, device=device)
    try:
        data = load_json(str(out), out.read_bytes())
        found = _campaign_of(data)
    except (OSError, ValueError, KeyError, TypeError, OverflowError, FxOracleError) as e:
        raise FxOracleError(f"{out}: holds no fxoracle campaign; choose another --out") from e
    if (found.seed, found.side, data["torch"], found.device) != (seed, side, TORCH.version,
                                                                   device):  # fmt: skip
        raise FxOracleError(
            f"{out}: holds a campaign of seed {found.seed} against {found.side} on torch "
            f"{data['torch']} ({found.device}); continue it with the same --seed, --against "
            "and --device, or choose another --out"
        )
    return found


def _count(value: object) -> int:
    """A count a campaign file holds: a whole number, not negative (`ValueError`)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{value!r} is not a count")
    return value


def _seconds(value: object) -> float:
    """A duration a campaign file holds: finite, not negative (`ValueError`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number of seconds")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{value!r} is not a number of seconds")
    return float(value)


def _campaign_of(data: dict[str, Any]) -> Campaign:
    """The campaign a findings file holds (`KeyError`, `TypeError` when it holds none)."""
    if not isinstance(data["findings"], list):
        raise TypeError("findings is not a list")
    findings = {f.signature: f for f in map(Finding.of_json, data["findings"])}
    return Campaign(_count(data["seed"]), str(data["against"]), _count(data["models"]),
                    _count(data["diverging_models"]), dict(data["by_wrong"]), findings,
                    side=str(data.get("side", data["against"])),
                    earlier_s=_seconds(data["elapsed_s"]),
                    device=str(data.get("device", "cpu")))  # fmt: skip
