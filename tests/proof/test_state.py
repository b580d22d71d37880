"""CHK-6 compares state, not only outputs (spec chapter 06): every input and every tensor a
module's graphs read by `get_attr` (buffers, parameters) after the call, on both sides; and a
run leaves the module's state as it found it."""

from __future__ import annotations

import pytest
import torch
import torch.fx

from checker.proof.numeric import BodiesRun
from checker.proof.runs import compare_runs, held_tensors, run
from checker.proof.verdict import Holds, Violated


def _buffer_module(momentum: float | None) -> torch.fx.GraphModule:
    """`y = x * 2`; `stats.mul_(momentum).add_(y.mean())` when momentum is set; returns `y`:
    `stats` is a buffer read by `get_attr`, written in place."""
    root = torch.nn.Module()
    root.register_buffer("stats", torch.ones(()))
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(torch.mul, (x, 2))
    if momentum is not None:
        stats = g.get_attr("stats")
        kept = g.call_method("mul_", (stats, momentum))
        g.call_method("add_", (kept, g.call_method("mean", (y,))))
    g.output(y)
    return torch.fx.GraphModule(root, g)


@pytest.mark.spec("CHK-6")
def test_chk6_a_buffer_written_otherwise_is_a_violation() -> None:
    """Same outputs, same inputs after the call; the buffer's update differs (or is lost): CHK-6
    names the state. Outputs alone would hold."""
    inputs = (torch.arange(4.0),)
    original = _buffer_module(0.9)
    assert held_tensors(original) == ["stats"]
    for other in (_buffer_module(0.5), _buffer_module(None)):
        verdict = compare_runs(original, BodiesRun(other).run, inputs, "")
        assert isinstance(verdict, Violated), verdict
        assert verdict.witness.startswith("CHK-6: state stats after the call")
    assert isinstance(compare_runs(original, BodiesRun(_buffer_module(0.9)).run, inputs, ""), Holds)


@pytest.mark.spec("CHK-6")
def test_chk6_runs_put_the_state_back() -> None:
    """A run reads the state after the call and puts it back: runs never see each other's
    updates, and the module is as it was."""
    module = _buffer_module(0.9)
    first = run(module, (torch.arange(4.0),), state=["stats"])
    second = run(module, (torch.arange(4.0),), state=["stats"])
    assert not isinstance(first, str) and not isinstance(second, str)
    torch.testing.assert_close(first.state[0], torch.tensor(3.9))
    torch.testing.assert_close(second.state[0], first.state[0])
    torch.testing.assert_close(module.get_buffer("stats"), torch.tensor(1.0))
