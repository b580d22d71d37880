"""`verify_backend()`: checks fxoracle's deduplication on every graph Dynamo captures and runs
the user's graph untouched (checker/tools/backend.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
import torch._dynamo
import torch.fx

from checker.tools.backend import verify_backend
from reference.errors import FxOracleError
from reference.pipeline import deduplicate
from reference.replace.outliner import DedupResult
from reference.torch_version import TORCH
from reference.track.tracker import GraphRegionTracker
from tests.support.models import Stack

# torch 2.11 only: inside a torch.compile backend its eager invoke_subgraph, run on the real
# example inputs, raises "Please convert all Tensors to FakeTensors first": CHK-17 is unknown
# there and the report a warning (spec chapter 00, Versions)
TORCH_2_11_IN_BACKEND = pytest.mark.xfail(
    TORCH.version.startswith("2.11."), reason="torch 2.11's runtime in a backend", strict=True
)

Compiled = Callable[..., Any]


class TwoGraphs(torch.nn.Module):
    """Two stacks with a graph break between them."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = Stack(), Stack(depth=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.first(x)
        torch._dynamo.graph_break()
        out: torch.Tensor = self.second(x)
        return out


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


@TORCH_2_11_IN_BACKEND
def test_repeated_blocks_run_equal_eager_and_name_the_groups() -> None:
    model, x = Stack(), torch.randn(4, 8)
    lines: list[str] = []
    out = torch.compile(model, backend=verify_backend(log=lines.append))(x)
    torch.testing.assert_close(out, model(x))
    assert len(lines) == 1
    # block 0 reads the input (requires_grad False), blocks 1 and 2 read a result: two regions
    assert "1 region group; group 0: 2 regions x 3 nodes [linear_1..x_1, linear_2..x_2]" in lines[0]
    assert "2 regions outlined into 1 subgraph, 0 refused; check holds" in lines[0]


@TORCH_2_11_IN_BACKEND
def test_a_graph_break_gives_one_report_per_graph() -> None:
    model, x = TwoGraphs(), torch.randn(4, 8)
    lines: list[str] = []
    out = torch.compile(model, backend=verify_backend(log=lines.append))(x)
    torch.testing.assert_close(out, model(x))
    assert [line.split(":")[1] for line in lines] == [" graph 0", " graph 1"]
    assert "group 0: 2 regions x 3 nodes" in lines[0]
    four = "group 0: 4 regions x 3 nodes [linear..x, linear_1..x_1, linear_2..x_2, linear_3..x_3]"
    assert four in lines[1]
    assert all("check holds" in line for line in lines)


def test_the_original_graph_is_what_runs() -> None:
    inner = verify_backend(log=lambda _: None)
    seen: list[bool] = []

    def spy(gm: torch.fx.GraphModule, inputs: list[torch.Tensor]) -> Compiled:
        code = gm.code
        compiled = inner(gm, inputs)
        seen.append(compiled == gm.forward and gm.code == code)
        return compiled

    model, x = Stack(), torch.randn(4, 8)
    torch.testing.assert_close(torch.compile(model, backend=spy)(x), model(x))
    assert seen == [True]


@TORCH_2_11_IN_BACKEND
def test_default_log_is_the_fxoracle_logger(caplog: pytest.LogCaptureFixture) -> None:
    model, x = Stack(), torch.randn(4, 8)
    with caplog.at_level(logging.INFO, logger="fxoracle"):
        torch.compile(model, backend=verify_backend())(x)
    mine = [r for r in caplog.records if r.name == "fxoracle"]
    assert [r.levelno for r in mine] == [logging.INFO]
    assert mine[0].getMessage().startswith("fxoracle: graph 0: 18 nodes, 1 region group")


def planted_bug(gm: torch.fx.GraphModule, tracker: GraphRegionTracker) -> DedupResult:
    """The real deduplication, then the final `sin` becomes `cos`: a wrong transformation."""
    result = deduplicate(gm, tracker)
    for node in gm.graph.nodes:
        if node.op == "call_method" and node.target == "sin":
            node.target = "cos"
    gm.recompile()
    return result


def crashing(gm: torch.fx.GraphModule, tracker: GraphRegionTracker) -> DedupResult:
    raise RuntimeError("planted crash\nsecond line")


def test_a_planted_bug_is_logged_and_the_program_still_runs() -> None:
    model, x = Stack(), torch.randn(4, 8)
    lines: list[str] = []
    out = torch.compile(model, backend=verify_backend(log=lines.append, transform=planted_bug))(x)
    torch.testing.assert_close(out, model(x))  # the user's graph ran, not ours
    assert len(lines) == 1
    assert "check violated" in lines[0]
    assert "numbers agree: violated" in lines[0]


def test_raise_on_failure_raises_fxoracle_error() -> None:
    model, x = Stack(), torch.randn(4, 8)
    backend = verify_backend(raise_on_failure=True, log=lambda _: None, transform=planted_bug)
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as caught:
        torch.compile(model, backend=backend)(x)
    inner = caught.value.inner_exception
    assert isinstance(inner, FxOracleError)
    assert "check violated" in str(inner)


def test_a_crashing_transformation_is_reported_as_an_error() -> None:
    model, x = Stack(), torch.randn(4, 8)
    lines: list[str] = []
    out = torch.compile(model, backend=verify_backend(log=lines.append, transform=crashing))(x)
    torch.testing.assert_close(out, model(x))
    assert lines[0].endswith("check error: RuntimeError: planted crash.")
    backend = verify_backend(raise_on_failure=True, log=lambda _: None, transform=crashing)
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed):
        torch.compile(model, backend=backend)(x)
