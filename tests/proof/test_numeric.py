"""The numbers obligations (spec chapter 06): CHK-6 on the inlined module, CHK-15 inside CHK-1,
CHK-16's tolerance, CHK-17 torch's runtime."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.fx

from checker.bench.blocks import feed, repeated_segments
from checker.proof.check import check_transformation
from checker.proof.number_inputs import input_sets
from checker.proof.numeric import BodiesRun, _RuntimeProbe
from checker.proof.report import NUMBERS, RUNTIME, WELL_FORMED
from checker.proof.runs import agreement, run, tolerance
from checker.proof.verdict import HOLDS, Holds, Unknown, Violated
from reference.dynamo.capture import Capture, capture
from reference.graph_copy import copy_graph_module
from reference.names import INVOKE
from reference.pipeline import deduplicate
from reference.torch_version import TORCH
from reference.track.tracker import GraphRegionTracker


def masked(t: torch.Tensor) -> torch.Tensor:
    return t[t > 0].sum() * 2 + t.mean()


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return masked(x) + masked(y)


def _pair() -> tuple[torch.fx.GraphModule, torch.fx.GraphModule, Capture]:
    x = torch.randn(6, generator=torch.Generator().manual_seed(0)).requires_grad_()
    y = torch.randn(6, generator=torch.Generator().manual_seed(1)).requires_grad_()
    c = capture(model, (x, y))
    original = copy_graph_module(c.gm).gm
    result = deduplicate(c.gm, c.tracker)
    assert len(result.replaced) == 4  # [mul, mean, add] and the mask [gt, getitem], twice
    return original, c.gm, c


@pytest.mark.spec("CHK-6")
def test_chk6_numbers_run_the_calls_bodies() -> None:
    """The transformed module runs with each call's body run directly, never torch's runtime
    for the op: the same numbers as the original."""
    original, transformed, c = _pair()
    ran: list[str] = []

    class Counted(BodiesRun):
        def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
            if target is INVOKE:
                ran.append(str(args[1]))
            return super().call_function(target, args, kwargs)

    got = Counted(transformed).run(*c.example_inputs)
    torch.testing.assert_close(got, original(*c.example_inputs))
    calls = [n for n in transformed.graph.nodes if n.target is INVOKE]
    assert len(ran) == len(calls) > 0
    report = check_transformation(original, transformed, c.example_inputs)
    assert report.ok, report.render_text()


@pytest.mark.spec("CHK-17")
def test_chk17_holds_on_a_correct_outlining() -> None:
    original, transformed, c = _pair()
    report = check_transformation(original, transformed, c.example_inputs)
    assert report.verdict_of(RUNTIME) == Holds()


@pytest.mark.spec("CHK-17")
def test_chk17_runtime_failure_is_unknown_and_named() -> None:
    """A subgraph that also returns a plain int (its operand's rank): its meaning is
    right (CHK-6 holds: nothing reads the extra output), but torch 2.13's eager runtime asserts
    that a non-tensor output is a SymInt. The verdict is Unknown and names torch's runtime, the
    call and the subgraph (the reference never builds such a subgraph, RPL-23). From 2.14 the
    eager runtime runs the body with plain autograd and the call works."""
    original, transformed, c = _pair()
    body = transformed.get_submodule("subgraph_0")
    assert isinstance(body, torch.fx.GraphModule)
    first = next(n for n in body.graph.nodes if n.op == "placeholder")
    output = next(n for n in body.graph.nodes if n.op == "output")
    with body.graph.inserting_before(output):
        rank = body.graph.call_method("dim", (first,))
    rank.meta["val"] = rank.meta["example_value"] = 0
    output.args = ((*output.args[0], rank),)
    body.recompile()
    report = check_transformation(original, transformed, c.example_inputs)
    assert report.verdict_of(NUMBERS) == Holds()
    verdict = report.verdict_of(RUNTIME)
    if TORCH.hop_runs_body_eagerly:  # from 2.14 the eager runtime runs the body: it works
        assert verdict == Holds(), report.render_text()
        return
    assert isinstance(verdict, Unknown), report.render_text()
    assert verdict.reason.startswith("CHK-17: torch's invoke_subgraph runtime raised ")
    assert "at invoke_subgraph (subgraph_0) on the example inputs" in verdict.reason


@pytest.mark.spec("CHK-15")
def test_chk15_a_subgraph_that_mutates_its_input_is_not_well_formed() -> None:
    original, transformed, c = _pair()
    body = transformed.get_submodule("subgraph_0")
    assert isinstance(body, torch.fx.GraphModule)
    first = next(n for n in body.graph.nodes if n.op == "placeholder")
    with body.graph.inserting_after(first):
        body.graph.call_method("add_", (first, 1))
    body.recompile()
    verdict = check_transformation(original, transformed, c.example_inputs).verdict_of(WELL_FORMED)
    assert isinstance(verdict, Violated)
    assert "CHK-15: add_ mutates the subgraph's input subgraph_input_" in verdict.witness


@pytest.mark.spec("CHK-16")
def test_chk16_tolerance_scales_with_magnitude() -> None:
    big = torch.full((4,), 200.0)
    assert tolerance(big) == (1.3e-6, 1e-5 * 200.0)
    assert agreement(big, big + 1.9e-5) == HOLDS  # within 1e-5 x 200 (+ rtol): not a bug
    assert isinstance(agreement(big, big * (1 + 1e-3)), Violated)  # a 1e-3 relative change is one
    small = torch.full((4,), 0.5)
    assert tolerance(small) == (1.3e-6, 1e-5)  # magnitude below 1: the default atol
    assert tolerance(torch.arange(3)) == (0.0, 0.0)  # integers: exact
    assert isinstance(agreement(torch.arange(3), torch.arange(3) + 1), Violated)


@pytest.mark.spec("CHK-16")
def test_chk16_torch_messages_are_joined_without_their_full_stops() -> None:
    """torch's "Expected 2.0 but got 3.0." and the next line join as "...3.0; Absolute ..."."""
    said = agreement(torch.tensor(2.0), torch.tensor(3.0))
    assert isinstance(said, Violated)
    assert (
        said.witness.startswith("Expected 2.0 but got 3.0; Absolute difference: 1.0")
        and ".;" not in said.witness
    )


@pytest.mark.spec("CHK-17")
def test_chk17_runtime_once_per_distinct_call() -> None:
    """Subgraphs of one structure, called with operands of one metadata, go through torch's
    runtime once (it retraces on every call); a subgraph of another structure goes through it
    too, and so does the same body called on other metadata."""
    bg = repeated_segments(3, 4)
    tracker = GraphRegionTracker()
    feed(tracker, bg)
    gm = torch.fx.GraphModule(torch.nn.Module(), bg.graph)
    original = copy_graph_module(gm).gm
    assert len(deduplicate(gm, tracker).subgraphs) == 3
    inputs = input_sets(original, None).sets[0][1]
    probe = _RuntimeProbe(gm)
    probe.run(*inputs)
    assert (len(probe.bodies), len(probe.seen), probe.found) == (3, 1, HOLDS)
    original2, transformed2, c = _pair()
    probe2 = _RuntimeProbe(transformed2)
    probe2.run(*c.example_inputs)
    assert (len(probe2.bodies), len(probe2.seen)) == (2, 2)  # two structures, one call each
    assert check_transformation(original2, transformed2, c.example_inputs).ok


def dropped(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.dropout(h @ w, 0.5, training=True) + h


def dropout_blocks(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor]:
    return (dropped(dropped(x, w), w),)


def _dropout_pair() -> tuple[torch.fx.GraphModule, torch.fx.GraphModule, Capture]:
    g = torch.Generator().manual_seed(0)
    x, w = (torch.randn(4, 4, generator=g).requires_grad_() for _ in range(2))
    c = capture(dropout_blocks, (x, w))
    original = copy_graph_module(c.gm).gm
    assert len(deduplicate(c.gm, c.tracker).replaced) == 2
    return original, c.gm, c


@pytest.mark.spec("CHK-17")
def test_chk17_a_random_body_and_the_runtime_draw_the_same_numbers() -> None:
    """The probe runs the body directly and through the runtime from one RNG state: dropout in
    a subgraph is not a difference (it was, blaming torch's runtime, before the state was
    restored)."""
    original, transformed, c = _dropout_pair()
    report = check_transformation(original, transformed, c.example_inputs)
    assert report.ok and report.verdict_of(RUNTIME) == Holds(), report.render_text()


@pytest.mark.spec("CHK-17")
def test_chk17_a_runtime_that_draws_extra_random_numbers_is_named() -> None:
    """Without `val` on the body's output (as torch's own pass leaves it), torch 2.13's runtime,
    in grad mode, runs the body once more to learn its outputs' metadata (N4): dropout draws
    twice, and the verdict says so. From 2.14 the runtime runs the body once."""
    original, transformed, c = _dropout_pair()
    body = transformed.get_submodule("subgraph_0")
    assert isinstance(body, torch.fx.GraphModule)
    for node in body.graph.nodes:
        node.meta.pop("val", None)
    verdict = check_transformation(original, transformed, c.example_inputs).verdict_of(RUNTIME)
    if TORCH.hop_runs_body_eagerly:
        assert verdict == Holds()
        return
    assert isinstance(verdict, Unknown)
    assert "of subgraph_0 on the example inputs" in verdict.reason


@pytest.mark.spec("CHK-6")
def test_chk6_a_cuda_run_waits_for_its_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel's device-side assert (an index out of range on CUDA) surfaces at the next
    synchronisation: each run on CUDA waits for its kernels, so the error is that run's (here a
    fake CUDA output, and a `synchronize` that raises as CUDA would)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        out = torch.empty(2, device="cuda")

    def raises() -> None:
        raise RuntimeError("CUDA error: device-side assert triggered")

    monkeypatch.setattr(torch.cuda, "synchronize", raises)
    assert run(lambda: out, []) == "RuntimeError: CUDA error: device-side assert triggered"
    assert not isinstance(run(lambda: torch.ones(2), []), str)  # CPU: nothing to wait for
