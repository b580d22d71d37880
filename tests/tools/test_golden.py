"""Golden files: every model of `tests/golden/` prints exactly its `.verify.txt`, `.explain.txt`
and `.diff.txt` (`make golden` rewrites them after a deliberate change; review the diff)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.regenerate import COMMANDS, expected_path, golden_text, models

CASES = [(m, c) for m in models() for c in COMMANDS]


@pytest.mark.parametrize(("model", "command"), CASES, ids=[f"{m.stem}-{c}" for m, c in CASES])
def test_golden_output(model: Path, command: str) -> None:
    assert golden_text(model, command) == expected_path(model, command).read_text()


def test_every_golden_model_has_its_outputs() -> None:
    assert len(models()) >= 3
    for model in models():
        for command in COMMANDS:
            text = expected_path(model, command).read_text()
            assert "(exit 2)" not in text, f"{model.name}: the golden output is an error"
