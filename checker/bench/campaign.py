"""`make bench`, part three: a campaign's throughput on one worker and on two (spec chapter 08,
DIF-13).

Models 0..n-1 of one seed, every component, no repros: once in this process (`--workers 1`),
once on two workers (this process and one spawned, whose start-up, torch's import included, is
counted), each timed by the wall clock. The table gives models/s; the verdict, the speedup
against `SPEEDUP_MIN` and whether both findings files agree apart from `elapsed_s` (DIF-13). A
measurement: `fxoracle bench` exits 0 whatever it says.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from checker.io.reports import to_json
from checker.oracle.campaign.fuzz import run_campaign

SPEEDUP_MIN = 1.8
MINUTES = 60.0  # a bound: `models` ends the campaign first


@dataclass(frozen=True, slots=True)
class CampaignRow:
    workers: int
    models: int
    seconds: float  # wall clock, from the call to the findings file's last write
    findings: str  # the findings file without `elapsed_s`

    @property
    def rate(self) -> float:
        return self.models / self.seconds


def measure(models: int, seed: int, workers: int) -> CampaignRow:
    """Run a campaign of `models` models on `workers` workers; time it by the wall clock."""
    with tempfile.TemporaryDirectory(prefix="fxoracle-bench-") as tmp:
        out = Path(tmp) / "findings.json"
        start = time.monotonic()
        campaign = run_campaign(MINUTES, seed, out, max_models=models, workers=workers)
        seconds = time.monotonic() - start
        data = json.loads(out.read_text())
    del data["elapsed_s"]
    return CampaignRow(workers, campaign.models, seconds, to_json(data))


def run(models: int, seed: int) -> str:
    """The same campaign on 1 and on 2 workers; the table and the verdict as text."""
    rows = [measure(models, seed, 1), measure(models, seed, 2)]
    lines = [f"{'workers':>8} {'models':>7} {'wall s':>8} {'models/s':>9}"]
    lines += [f"{r.workers:>8} {r.models:>7} {r.seconds:>8.1f} {r.rate:>9.2f}" for r in rows]
    speedup = rows[1].rate / rows[0].rate
    same = rows[0].findings == rows[1].findings
    verdict = "PASS" if speedup >= SPEEDUP_MIN and same else "FAIL"
    agree = "yes" if same else "NO"
    lines.append(f"{verdict}  campaign of {models} models, speedup on 2 workers >= "
                 f"{SPEEDUP_MIN:g}: {speedup:.2f}; same findings: {agree}")  # fmt: skip
    return "\n".join(lines) + "\n"
