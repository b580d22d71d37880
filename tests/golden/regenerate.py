"""Golden files: each model of `tests/golden/` with what `fxoracle verify`, `explain` and
`diff --against torch` print for it, side by side (`<model>.verify.txt`, ...). `make golden`
rewrites them; `tests/tools/test_golden.py` compares. Timings are the one thing that varies
between runs, so the verify text leaves its `time:` line out.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from checker.cli import main
from reference.torch_version import TORCH

HERE = Path(__file__).resolve().parent
COMMANDS = {
    "verify": ["verify"],
    "explain": ["explain"],
    "diff": ["diff", "--against", "torch"],
}


def models() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if p.name not in ("__init__.py", "regenerate.py"))


def golden_text(model: Path, command: str) -> str:
    """What `fxoracle <command> <model>` prints, run from the repository root, with the
    model's path relative to it, and without timings."""
    root = HERE.parent.parent
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.chdir(root):
        code = main([*COMMANDS[command][:1], str(model.relative_to(root)), *COMMANDS[command][1:]])
    text = out.getvalue().replace(TORCH.label, "torch <version>")  # the same on every torch
    kept = [ln for ln in text.splitlines() if not ln.startswith("  time: ")]
    return "\n".join([*kept, f"(exit {code})"]) + "\n"


def expected_path(model: Path, command: str) -> Path:
    return model.with_name(f"{model.stem}.{command}.txt")


def regenerate() -> int:
    for model in models():
        for command in COMMANDS:
            expected_path(model, command).write_text(golden_text(model, command))
            print(f"wrote {expected_path(model, command).relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(regenerate())
