"""`python -m checker.fuzz --minutes M --seed S --out PATH`: a differential campaign on random
models (spec chapter 08, DIF-9).

Models come from `checker.randmodels` (seed S, index 0, 1, ...) and are diffed with every
component, the hostile split policies included. Divergences are grouped by signature
(component, kind, wrong side, case); the first model of each signature is kept with its source
and, with `--repro-dir`, a minimized repro. The findings file is rewritten (atomically) after
every model, so an interrupted campaign keeps what it found. A progress line goes to stderr.
Nothing a model does stops the campaign: an exception of the oracle itself is recorded as a
finding of its own (`oracle-error`), which is a bug to fix; so is a divergence blamed on the
reference. Either makes the exit status 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from checker.diff import Divergence, GraphDiff, Sides, diff_file, make_sides
from checker.randmodels import random_source


@dataclass(slots=True)
class Campaign:
    """What a campaign has seen so far: models, divergences by wrong side, findings."""

    seed: int
    against: str
    models: int = 0
    diverging: int = 0
    by_wrong: dict[str, int] = field(default_factory=dict)
    findings: dict[str, dict[str, object]] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def record(self, diff: GraphDiff, sides: Sides, path: Path, repro_dir: Path | None) -> None:
        """Count `diff` and keep the first model of every new signature."""
        self.models += 1
        self.diverging += not diff.agree
        for d in diff.divergences:
            self.by_wrong[d.wrong] = self.by_wrong.get(d.wrong, 0) + 1
            key = signature(d)
            if key in self.findings:
                count = self.findings[key]["count"]
                self.findings[key]["count"] = int(count) + 1 if isinstance(count, int) else 1
                continue
            tag = f"finding{len(self.findings)}"
            self.findings[key] = {"signature": key, "count": 1, "graph": diff.graph,
                                  "divergence": d.to_json(), "source": diff.source,
                                  "repro": _repro(path, d, sides, repro_dir, tag)}  # fmt: skip

    def to_json(self) -> dict[str, object]:
        return {
            "seed": self.seed,
            "against": self.against,
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


def signature(d: Divergence) -> str:
    """Divergences with one signature are one finding: `component/kind/wrong/case`."""
    return "/".join((d.component, d.kind, d.wrong, d.case))


def _repro(path: Path, d: Divergence, sides: Sides, repro_dir: Path | None, tag: str) -> str | None:
    if repro_dir is None or d.wrong not in ("reference", sides.label):
        return None
    from checker.shrink import write_repro

    try:
        found = write_repro(path, [d], sides, repro_dir, tag)
    except Exception:  # shrinking is best effort: the finding keeps its source
        return None
    return None if found is None else str(found)


def run_campaign(
    minutes: float,
    seed: int,
    out: Path,
    *,
    against: str = "torch",
    repro_dir: Path | None = None,
    max_models: int | None = None,
    progress: TextIO | None = None,
) -> Campaign:
    """Diff random models until `minutes` pass (or `max_models` are done), writing `out`."""
    from checker.cli import to_json, write_atomically

    sides = make_sides(against, "all", hostile=True)
    campaign = Campaign(seed, sides.label)
    deadline = campaign.started + 60.0 * minutes
    with tempfile.TemporaryDirectory(prefix="fxoracle-fuzz-") as tmp:
        index = 0
        while time.monotonic() < deadline and (max_models is None or index < max_models):
            name = f"random_{seed}_{index}"
            path = Path(tmp) / f"{name}.py"
            path.write_text(random_source(seed, index))
            campaign.record(_diff_one(path, sides, name), sides, path, repro_dir)
            write_atomically(str(out), to_json(campaign.to_json()))
            _show(progress, campaign.progress())
            index += 1
    _show(progress, campaign.progress(), final=True)
    return campaign


def _diff_one(path: Path, sides: Sides, name: str) -> GraphDiff:
    """`diff_file`, or an `oracle-error` finding if the oracle itself raised."""
    source = path.read_text()
    try:
        return diff_file(path, sides, name=name, source=source)
    except Exception as e:  # FxOracleError included: a generated model must be valid
        text = f"{type(e).__name__}: {e}".splitlines()[0]
        return GraphDiff(name, (Divergence("all", "oracle-error", "unknown", text),), None, source)


def _show(stream: TextIO | None, line: str, final: bool = False) -> None:
    if stream is None:
        return
    if stream.isatty():
        stream.write("\r" + line + ("\n" if final else ""))
    else:
        stream.write(line + "\n")
    stream.flush()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.fuzz", description=__doc__)
    parser.add_argument("--minutes", type=float, default=1.0, help="campaign length")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings.json"))
    parser.add_argument("--against", default="torch", help="torch, torch-simple or module:attr")
    parser.add_argument("--repro-dir", type=Path, help="write a minimized repro per finding")
    parser.add_argument("--max-models", type=int, help="stop after this many models")
    args = parser.parse_args(argv)
    try:
        campaign = run_campaign(
            args.minutes, args.seed, args.out, against=args.against,
            repro_dir=args.repro_dir, max_models=args.max_models, progress=sys.stderr,
        )  # fmt: skip
    except KeyboardInterrupt:
        print(f"\ninterrupted; findings so far in {args.out}", file=sys.stderr)
        return 130
    ours = [k for k in campaign.findings if "/oracle-error/" in k or "/reference/" in k]
    print(f"{campaign.models} models, {len(campaign.findings)} signatures -> {args.out}")
    if ours:
        print(f"fxoracle's own bugs (DIF-9): {', '.join(sorted(ours))}")
    return 1 if ours else 0


if __name__ == "__main__":
    raise SystemExit(main())
