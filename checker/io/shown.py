"""User-controlled text made safe to show (spec chapter 10, FIL-10): file names, archive member
names and exception messages reach the terminal and the reports only through here.

`shown` makes any text one line with nothing a terminal acts on: every control character (C0,
DEL, C1, ESC, newlines), format character (bidirectional overrides) and line or paragraph
separator is written as its Python escape (`\\x1b`, `\\n`, `\\u202e`), and a byte that was not
UTF-8 (a surrogate escape) as `\\udcNN`. `shown_lines` does the same but keeps newlines and tabs:
a multi-line report. `one_line` also bounds the length, so a 3-million-digit number in a file is
not a 3 MB line.
"""

from __future__ import annotations

import re

UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                    r"\ud800-\udfff]")  # fmt: skip
UNSAFE_IN_LINES = re.compile(r"(?![\n\t])" + UNSAFE.pattern)
LINE_MAX = 1000  # characters of one error line


def _escape(match: re.Match[str]) -> str:
    return match[0].encode("unicode_escape", "backslashreplace").decode("ascii")


def shown(text: str) -> str:
    """`text` as one line a terminal shows as is: control and format characters escaped."""
    return UNSAFE.sub(_escape, text)


def shown_lines(text: str) -> str:
    """`text` with its lines kept, every other control or format character escaped."""
    return UNSAFE_IN_LINES.sub(_escape, text)


def one_line(text: str, limit: int = LINE_MAX) -> str:
    """`shown(text)`, cut to `limit` characters with how many were left out."""
    line = shown(text)
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... ({len(line) - limit} more characters)"
