"""CHK-20: random draws replay alike on both sides of every comparison, on every generator (the
CPU's and each CUDA device's); the issue 29 dropout model (`tests/corpus/own_dropout_train.py`:
train mode, weights requiring grad) holds on the CPU."""

from __future__ import annotations

import pytest
import torch

from checker.cli import main
from checker.proof.check import check_transformation
from checker.proof.draws import Draws, cuda_devices, seeded
from checker.proof.report import NUMBERS, RUNTIME
from checker.proof.verdict import Holds, Unknown
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.names import INVOKE
from reference.pipeline import deduplicate
from reference.torch_version import TORCH
from tests.support.corpus import load_model_file
from tests.support.paths import CORPUS

pytestmark = pytest.mark.spec("CHK-20")
DROPOUT = CORPUS / "own_dropout_train.py"


def test_chk20_seeded_draws_alike_and_leaves_the_generators_as_they_were() -> None:
    before = Draws.now()
    with seeded():
        first = torch.rand(8)
    with seeded():
        second = torch.rand(8)
    torch.testing.assert_close(first, second, rtol=0.0, atol=0.0)
    assert Draws.now().same_as(before)


def test_chk20_a_snapshot_replays_the_same_draws() -> None:
    with seeded():
        start = Draws.now()
        first = torch.nn.functional.dropout(torch.ones(64), 0.5)
        after = Draws.now()
        assert not after.same_as(start)
        start.restore()
        again = torch.nn.functional.dropout(torch.ones(64), 0.5)
        torch.testing.assert_close(again, first, rtol=0.0, atol=0.0)
        assert Draws.now().same_as(after)


def test_chk20_no_cuda_context_is_started_on_the_cpu() -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the CUDA tier checks its generators")
    assert cuda_devices() == [] and Draws.now().cuda == ()


def test_chk20_the_dropout_model_in_train_mode_holds_on_the_cpu() -> None:
    """The reference's outlining of three dropout blocks: the calls' operands require grad
    (torch's autograd path for `invoke_subgraph`), both sides draw the same masks (CHK-6) and
    torch's runtime draws what the body draws (CHK-17): the subgraph's nodes carry `val`
    (RPL-22), so the runtime never runs the body for metadata (N4)."""
    f = load_model_file(DROPOUT)
    c = capture(f.model, f.example_inputs, f.dynamic)
    original = copy_graph_module(c.gm).gm
    deduplicate(c.gm, c.tracker)
    calls = [n for n in c.gm.graph.nodes if n.target is INVOKE]
    assert len(calls) == 2
    assert all(a.meta["example_value"].requires_grad for a in calls[1].args[2:])
    report = check_transformation(original, c.gm, c.example_inputs)
    assert report.verdict_of(NUMBERS) == Holds() and report.verdict_of(RUNTIME) == Holds()


def test_chk20_without_val_torchs_runtime_draws_otherwise_n4() -> None:
    """The same outlining with the body's `val` removed, as torch's pass leaves it: torch
    2.13's autograd path runs the body once more for metadata before the call (N4), so the
    runtime's masks differ from the body's; the verdict names the runtime (exit 1)."""
    f = load_model_file(DROPOUT)
    c = capture(f.model, f.example_inputs, f.dynamic)
    original = copy_graph_module(c.gm).gm
    deduplicate(c.gm, c.tracker)
    body = c.gm.get_submodule("subgraph_0")
    assert isinstance(body, torch.fx.GraphModule)
    for node in body.graph.nodes:
        node.meta.pop("val", None)
    report = check_transformation(original, c.gm, c.example_inputs)
    assert report.verdict_of(NUMBERS) == Holds()
    verdict = report.verdict_of(RUNTIME)
    if TORCH.hop_runs_body_eagerly:  # 2.14 on: the body runs once
        assert verdict == Holds()
        return
    assert isinstance(verdict, Unknown)
    assert verdict.reason.startswith("CHK-17: torch's invoke_subgraph runtime returns ")


def test_chk20_verify_exits_0_on_the_dropout_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(DROPOUT), "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "CHK-17 runs in torch's runtime: holds" in out and "ok: true" in out
