"""The progress of `fxoracle fuzz` on stderr (spec chapter 08, DIF-9).

On a terminal: a tqdm bar of the models recorded (out of `--max-models` when given), models/s,
and `findings=` (signatures so far) and `fxoracle_bugs=` (those that are fxoracle's own) as its
postfix. Elsewhere (logs, CI) no bar. Either way the campaign's summary line comes last.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TextIO

from tqdm import tqdm

from checker.oracle.findings import Campaign


class CampaignBar:
    """A `Progress` for `run_campaign`; a context manager that closes the bar."""

    def __init__(
        self, total: int | None, out: TextIO | None = None, enabled: bool | None = None
    ) -> None:
        """`total`: `--max-models`, if any; `out`: stderr by default; `enabled`: None shows
        the bar on a terminal only."""
        self._out = out or sys.stderr
        self._bar = tqdm(total=total, desc="fuzz", unit=" models", file=self._out,
                         disable=None if enabled is None else not enabled,
                         dynamic_ncols=True)  # fmt: skip

    def __call__(self, campaign: Campaign, final: bool) -> None:
        self._bar.update(campaign.models - self._bar.n)
        bugs = len(campaign.fxoracle_bugs)
        self._bar.set_postfix(findings=len(campaign.findings), fxoracle_bugs=bugs)
        if final:
            self._bar.close()
            print(campaign.progress(), file=self._out, flush=True)

    def __enter__(self) -> CampaignBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._bar.close()
