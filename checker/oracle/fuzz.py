"""`fxoracle fuzz --minutes M --seed S --out PATH`: a differential campaign on random models
(spec chapter 08, DIF-9, DIF-13).

Models come from `checker.oracle.randmodels` (seed S, index 0, 1, ...), built in memory, and are
diffed with every component, the hostile split policies included (`diff_random`). Divergences
are grouped by signature (component, kind, blamed side, case); the first model of each
signature, by index, is kept with its source and, with `--repro-dir`, a minimized repro. The
findings file is rewritten (atomically) after every model, so an interrupted campaign keeps what
it found; run again with the same file, seed and side, it goes on from its next model, and any
other file there is refused (DIF-16). Nothing a model does stops the campaign: an exception of
the oracle itself is recorded as a finding of its own (`oracle-error`), which is a bug to fix;
so is a divergence blamed on the reference. Either makes the exit status 1.

The work is two tasks, `diff_task` (one model) and `repro_task` (one new signature), run in
this process, on a process pool or on a Ray cluster (`checker.oracle.campaign_pool`); the
`Campaign` records outcomes in index order, so what it finds does not depend on where they ran.
"""

from __future__ import annotations

from pathlib import Path

from checker.oracle.campaign_pool import Plan, run_plan
from checker.oracle.findings import Campaign, Progress, continued
from checker.oracle.fuzz_tasks import sides_for
from reference.errors import FxOracleError

__all__ = ["Campaign", "Progress", "run_campaign"]


def run_campaign(
    minutes: float,
    seed: int,
    out: Path,
    *,
    against: str = "torch",
    repro_dir: Path | None = None,
    max_models: int | None = None,
    progress: Progress | None = None,
    workers: int | None = 1,
    ray: str | None = None,
) -> Campaign:
    """Diff random models until `minutes` pass (or `max_models` are done in all), writing
    `out`; a campaign `out` holds already is continued from its next model (DIF-16).
    `workers`: processes (1: this one; None: every core, or with `ray` the cluster's CPUs);
    `ray`: a Ray cluster's address, or `local` (DIF-13)."""
    if workers is not None and workers < 1:
        raise FxOracleError("fxoracle fuzz: --workers must be at least 1")
    campaign = continued(out, seed, against, sides_for(against).label)
    plan = Plan(seed, against, out, repro_dir, max_models, campaign.started + 60.0 * minutes)
    run_plan(plan, campaign, workers, ray, progress)
    return campaign
