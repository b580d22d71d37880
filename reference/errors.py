"""The one exception type fxoracle raises on bad input, and how an exception is told in one line.

Internal invariants are `assert`s whose messages start with a spec id; a caller that passes a
malformed graph, a non-graph, or an impossible request gets `FxOracleError` with a message that
says what is wrong and, where it helps, what to do. The CLI turns it into one line and exit 2.
The public entry points check their arguments' types first (`reference.arguments`, FIL-6).
"""

from __future__ import annotations

import traceback


class FxOracleError(Exception):
    """Bad input to fxoracle: the message says what is wrong. Never an internal bug."""


def first_line(e: BaseException) -> str:
    """The first line of `e`'s message, or `(no message)` with the function that raised it when
    `e` was raised (`(no message) in _stable_topological_sort`: torch 2.11 and 2.12 assert bare);
    an exception whose `__str__` fails (a user's) is told by that failure, never raises it."""
    try:
        text = str(e).strip()
    except Exception as failed:
        return f"(its message cannot be read: {type(failed).__name__})"
    if text:
        return text.splitlines()[0]
    tb = e.__traceback__
    return f"(no message) in {traceback.extract_tb(tb)[-1].name}" if tb else "(no message)"


def describe(e: BaseException) -> str:
    """`Type: first line of the message`: what every report says of an exception."""
    return f"{type(e).__name__}: {first_line(e)}"


CAUSE_LIMIT = 300  # characters of a cause kept on the one line; longer ones end in "..."


def root_cause(e: BaseException) -> BaseException:
    """The innermost exception `e` was raised from or during (`__cause__`, else `__context__`,
    even where `from None` hid it: Dynamo hides the user's own error so), or `e` itself."""
    seen = [e]
    while True:
        inner = seen[-1].__cause__ or seen[-1].__context__
        if inner is None or inner in seen:
            return seen[-1]
        seen.append(inner)


def describe_with_cause(e: BaseException) -> str:
    """`describe(e)`, then the root cause's own words when they are not already there (torch's
    "RuntimeError when making fake tensor call" hides the user's shape mismatch in its cause):
    `...; cause: RuntimeError: a and b must have same reduction dim ...`; a Dynamo graph break
    also gives its explanation and the user's line (`sys.exit` in `forward`: `...; Dynamo does
    not know how to trace the builtin sys.exit. (m.py, line 5, in forward)`). Each addition is
    one line, control characters escaped, shortened past `CAUSE_LIMIT` characters (FIL-4)."""
    told = describe(e)
    root = root_cause(e)
    said = first_line(root)
    if root is not e and said not in told:
        told += f"; cause: {_shortened(f'{type(root).__name__}: {said}')}"
    context = _graph_break_context(root)
    return f"{told}; {_shortened(context)}" if context else told


def _graph_break_context(e: BaseException) -> str:
    """The first sentence of the `Explanation:` line Dynamo writes below a graph break's first
    line, and the user's line from its `from user code:` section; empty when it has neither."""
    try:
        lines = [line.strip() for line in str(e).splitlines()]
    except Exception:
        return ""
    explained = next((x.removeprefix("Explanation:").strip() for x in lines
                      if x.startswith("Explanation:")), "")  # fmt: skip
    explained = explained.replace("`", "").split(". ")[0].rstrip(".")
    explained += "." if explained else ""
    where = next((x.removeprefix("File ").replace('"', "") for x in lines
                  if x.startswith('File "')), "")  # fmt: skip
    return f"{explained} ({where})" if explained and where else explained


def _shortened(text: str) -> str:
    """`text` with control characters escaped, cut to `CAUSE_LIMIT` characters."""
    text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= CAUSE_LIMIT else text[: CAUSE_LIMIT - 3] + "..."
