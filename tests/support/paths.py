"""Where the tests find the repository's files."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
EXAMPLES = ROOT / "checker" / "examples"
SPECS = ROOT / "specs"
