"""Writing reports: stable JSON, and files that are never left half-written (README, "Exit
codes")."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def to_json(data: object) -> str:
    """Sorted keys, two-space indent, a final newline: the same data, the same bytes."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def write_atomically(path: str | Path, text: str) -> None:
    """Write `text` to `path` ('-' is stdout) so that no half-written file is ever left."""
    if str(path) == "-":
        sys.stdout.write(text)
        return
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or Path("."), prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a report is meant to be read
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
