"""Same input, same report, in every process (TRK-1, overview "Determinism")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _strip_timings(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip_timings(v) for k, v in value.items() if not k.endswith("_s")}
    if isinstance(value, list):
        return [_strip_timings(v) for v in value]
    return value


def _report(seed: str, out: Path) -> object:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    cmd = [sys.executable, "-m", "checker.cli", "verify", "--json", str(out)]
    subprocess.run(cmd, check=True, env=env, capture_output=True)
    return _strip_timings(json.loads(out.read_text()))


def test_trk1_report_identical_across_hash_seeds(tmp_path: Path) -> None:
    """TRK-1: two processes with different hash seeds write the same report."""
    first = _report("1", tmp_path / "a.json")
    second = _report("12345", tmp_path / "b.json")
    assert first == second
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
