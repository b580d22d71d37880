"""The command line's bad-input contract, as tests check it: one line on stderr, no traceback."""

from __future__ import annotations

import pytest


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """What was printed on stderr, asserted to be one `fxoracle: error:` line (exit 2's)."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fxoracle: error: "), err
    assert "Traceback" not in err
    return err
