"""Worked examples in specs/ are produced by code (issue 8: a course that cannot rot).

A chapter marks an example with `<!-- example: examples/NAME.py -->` followed by a ```text
block. The block must equal what the script prints. `python -m tests.course.spec_examples` (or
`make specs`) rewrites every block from its script; the test compares them.
"""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import SPECS

BLOCK = re.compile(r"<!-- example: (?P<script>[\w/.]+) -->\n```text\n(?P<body>.*?)```", re.S)


@dataclass(frozen=True, slots=True)
class Example:
    chapter: Path
    script: Path
    expected: str


def examples() -> list[Example]:
    found = []
    for chapter in sorted(SPECS.glob("*.md")):
        for m in BLOCK.finditer(chapter.read_text()):
            found.append(Example(chapter, SPECS / m["script"], m["body"]))
    return found


def run(script: Path) -> str:
    """What the script prints (torch's own warnings and logs are not part of it)."""
    import torch._dynamo

    torch._dynamo.reset()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(script), run_name="__main__")
    return without_version(out.getvalue())


def without_version(text: str) -> str:
    """The installed torch's version written as `torch <version>`: a worked example reads the
    same whichever torch printed it."""
    from reference.torch_version import TORCH

    return text.replace(TORCH.label, "torch <version>")


def regenerate() -> int:
    changed = 0
    for chapter in sorted(SPECS.glob("*.md")):
        text = chapter.read_text()

        def fill(m: re.Match[str]) -> str:
            body = run(SPECS / m["script"])
            return f"<!-- example: {m['script']} -->\n```text\n{body}```"

        new = BLOCK.sub(fill, text)
        if new != text:
            chapter.write_text(new)
            changed += 1
    return changed


if __name__ == "__main__":
    print(f"{regenerate()} chapter(s) rewritten", file=sys.stderr)
