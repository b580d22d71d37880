"""The progress of many models on stderr: `fxoracle diff` and `fxoracle fuzz` (spec chapter 08).

On a terminal: a tqdm bar of the models done, models/s and a postfix the caller writes (counts of
what was found). Elsewhere (logs, CI, `--json -`) one line per model instead (`diff: 3/40
random_0_2 agree (so far diverge=1 fail=0)`), so a long run is never silent (DIF-32).
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Never, Self, TextIO

from tqdm import tqdm


class Bar:
    """A bar named `desc`, shown from `start` or the first `show`; a context manager that
    closes it. `enabled`: None shows it on a terminal only; `leave` keeps it on screen when
    closed."""

    def __init__(
        self, desc: str, out: TextIO | None = None, enabled: bool | None = None,
        leave: bool = True,
    ) -> None:  # fmt: skip
        self.out = out or sys.stderr
        self._desc, self._enabled, self._leave = desc, enabled, leave
        self._bar: tqdm[Never] | None = None
        self._said = -1  # the models done the last line said (off a terminal)

    def show(self, done: int, postfix: str, total: int | None = None) -> None:
        """`done` models of `total` so far, then `postfix`: the bar, or off a terminal a line."""
        bar = self.start(total) if self._bar is None else self._bar
        if bar.disable:
            if self._enabled is None and done != self._said:  # no terminal: a line per model
                of = f"/{total or bar.total}" if (total or bar.total) else ""
                print(f"{self._desc}: {done}{of} {postfix}", file=self.out, flush=True)
                self._said = done
            return
        bar.update(done - bar.n)
        bar.set_postfix_str(postfix)  # refreshes: the line shows both

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def start(self, total: int | None) -> tqdm[Never]:
        """Show the bar: 0 models of `total` (None: not known)."""
        self._bar = tqdm(total=total, desc=self._desc, unit=" models", file=self.out,
                         disable=None if self._enabled is None else not self._enabled,
                         dynamic_ncols=True, leave=self._leave)  # fmt: skip
        return self._bar

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
