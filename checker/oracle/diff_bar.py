"""The progress of `fxoracle diff` on several models, on stderr (spec chapter 08).

On a terminal: a tqdm bar of the models diffed, models/s, the model just done, and
`diverge=` (models with a divergence) and `fail=` (models where a side is blamed or fxoracle
failed: the exit status's count) as its
postfix. Elsewhere (logs, CI, `--json -`) no bar: the report is the output.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Never, TextIO

from tqdm import tqdm

from checker.oracle.diff import GraphDiff


class DiffBar:
    """A `Progress` for `run_diff`; a context manager that closes the bar."""

    def __init__(self, out: TextIO | None = None, enabled: bool | None = None) -> None:
        """`out`: stderr by default; `enabled`: None shows the bar on a terminal only."""
        self._out, self._enabled = out or sys.stderr, enabled
        self._bar: tqdm[Never] | None = None
        self._diverge = self._fail = 0

    def __call__(self, done: GraphDiff, total: int) -> None:
        if self._bar is None:
            self._bar = tqdm(total=total, desc="diff", unit=" models", file=self._out,
                             disable=None if self._enabled is None else not self._enabled,
                             dynamic_ncols=True, leave=False)  # fmt: skip
        bar = self._bar
        self._diverge += not done.agree
        self._fail += done.fails
        bar.set_postfix_str(f"{done.graph} diverge={self._diverge} fail={self._fail}")
        bar.update(1)

    def __enter__(self) -> DiffBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.close()
