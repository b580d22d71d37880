"""Ctrl-C that no model can swallow (spec chapter 08, DIF-13).

Ctrl-C raises `KeyboardInterrupt` in whatever runs at that moment; if that is a side's code
inside torch (a split, a compile), torch may turn it into an error of its own, which the oracle
records as the side's crash, and the campaign would go on. `interrupts_noted()` keeps the usual
`KeyboardInterrupt` and also notes the signal, so the campaign's loop raises it again at its
next step.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sys import UnraisableHookArgs


@contextmanager
def interrupts_noted() -> Iterator[threading.Event]:
    """An event set by every Ctrl-C in the block. Only where Ctrl-C raises (the main thread,
    Python's own handler in place); elsewhere the event is never set and nothing changes."""
    noted = threading.Event()
    before = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(before):
        yield noted
        return
    chained = before

    def note(signum: int, frame: FrameType | None) -> None:
        noted.set()
        chained(signum, frame)

    signal.signal(signal.SIGINT, note)
    hook = sys.unraisablehook
    sys.unraisablehook = _quiet_interrupts(hook)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, before)
        sys.unraisablehook = hook


def _quiet_interrupts(
    hook: Callable[[UnraisableHookArgs], object],
) -> Callable[[UnraisableHookArgs], object]:
    """Python prints an exception it cannot raise (one in a weakref callback or `__del__`) with
    its traceback; a Ctrl-C that lands there is noted and raised at the campaign's next step,
    so it is not printed."""

    def quiet(args: UnraisableHookArgs) -> object:
        if isinstance(args.exc_value, KeyboardInterrupt):
            return None
        return hook(args)

    return quiet
