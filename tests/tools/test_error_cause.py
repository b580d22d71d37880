"""The cause on the one error line (spec chapter 10, FIL-4): where torch's message hides what
went wrong in the user's model, the root cause's own words end the line, escaped and shortened
only past `CAUSE_LIMIT` characters."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.cli import main
from reference.errors import CAUSE_LIMIT, describe_with_cause
from tests.support.errors import one_line_error

pytestmark = pytest.mark.filterwarnings("ignore")

SHAPE_MISMATCH = """import torch
def model(x, w):
    return torch.relu(x @ w) + 1
example_inputs = (torch.randn(2, 5), torch.randn(4, 4))
"""
COND_WRITES_A_BUFFER = """import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))
    def forward(self, x):
        def yes(x):
            self.count.add_(1)
            return x.sin()
        return torch.cond(x.sum() > 0, yes, lambda x: x.cos(), (x,))
model = M()
example_inputs = (torch.randn(3),)
"""
EXITS_IN_FORWARD = """import sys
import torch
class M(torch.nn.Module):
    def forward(self, x):
        sys.exit(3)
model = M()
example_inputs = (torch.randn(3),)
"""
CASES = {
    "shape_mismatch": (
        SHAPE_MISMATCH,
        "RuntimeError when making fake tensor call; cause: RuntimeError: a and b must have same "
        "reduction dim, but got [2, 5] X [4, 4].",
    ),
    "cond_writes_a_buffer": (
        COND_WRITES_A_BUFFER,
        "Got graph break/error:; cause: Unsupported: Encountered input mutation during higher "
        "order op tracing; Higher order ops do not support input mutation.",
    ),
    "exits_in_forward": (
        EXITS_IN_FORWARD,
        "Attempted to call function marked as skipped; Dynamo does not know how to trace the "
        "builtin sys.exit. (",  # then the model file's full path, its line and function
    ),
    "exits_in_forward_where": (
        EXITS_IN_FORWARD,
        "exits_in_forward_where.py, line 5, in forward)",
    ),
}


@pytest.mark.spec("FIL-4")
@pytest.mark.parametrize("case", sorted(CASES))
def test_fil4_the_cause_ends_the_one_error_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, tail = CASES[case]
    path = tmp_path / f"{case}.py"
    path.write_text(source)
    assert main(["verify", str(path)]) == 2
    err = one_line_error(capsys).rstrip("\n")
    assert err.startswith("fxoracle: error: capture failed: ") and tail in err, err


@pytest.mark.spec("FIL-4")
def test_fil4_a_cause_is_escaped_and_shortened_past_the_limit() -> None:
    try:
        try:
            raise ValueError("tab\there " + "x" * 1000)
        except ValueError:
            raise RuntimeError("outer") from None
    except RuntimeError as e:
        line = describe_with_cause(e)
    assert line.startswith("RuntimeError: outer; cause: ValueError: tab\\there xxx")
    cause = line.split("; cause: ", 1)[1]
    assert len(cause) == CAUSE_LIMIT and cause.endswith("...") and "\n" not in line
    assert describe_with_cause(RuntimeError("alone")) == "RuntimeError: alone"
