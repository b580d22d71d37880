"""Running a written repro as its reader would: `python repro.py` in a directory that is not
the repro's, with only what the environment makes importable (spec chapter 08, DIF-15, DIF-19).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def fails_from_elsewhere(repro: Path | str, elsewhere: Path) -> str:
    """Run `repro` with this interpreter from `elsewhere`; its stderr, asserted to end in an
    `AssertionError` (exit 1)."""
    elsewhere.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(Path(repro).resolve())]
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False,
                         cwd=elsewhere)  # fmt: skip
    assert ran.returncode == 1, (ran.returncode, ran.stderr[-2000:])
    assert "AssertionError" in ran.stderr, ran.stderr[-2000:]
    return ran.stderr
