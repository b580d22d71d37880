"""CHK-17 includes torch's training runtime (spec chapter 06): a transformed module whose inputs
or parameters require grad is compiled through AOTAutograd, forward and backward, and a
rejection names the obligation it breaks."""

from __future__ import annotations

import operator
from pathlib import Path

import pytest
import torch

from checker.io.loaders import load_pt2
from checker.proof.check import check_transformation
from checker.proof.report import RUNTIME
from checker.proof.training import (
    NO_TUPLE,
    compile_and_train,
    no_op_compiler,
    returns_tuple,
    training,
)
from checker.proof.verdict import HOLDS, Holds, Unknown
from reference.dynamo.capture import Capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from tests.support.corpus import CORPUS_DIR, capture_with_torch, torch_dedup_graph
from tests.support.models import Stack


@pytest.mark.spec("CHK-17")
def test_chk17_torchs_batchnorm_subgraph_is_rejected_by_training_naming_rpl7() -> None:
    """torch's pass outlines the BatchNorm blocks in train mode (N14): the eager runtime runs
    them, AOTAutograd rejects the subgraph's buffer write; CHK-17 names RPL-7."""
    path = CORPUS_DIR / "own_batchnorm_train.py"
    found = capture_with_torch(path)
    original = copy_graph_module(found.gm).gm
    report = check_transformation(original, torch_dedup_graph(path), found.example_inputs)
    verdict = report.verdict_of(RUNTIME)
    assert isinstance(verdict, Unknown), verdict
    assert "training runtime (AOTAutograd) rejects a subgraph writes an operand (RPL-7" in (
        verdict.reason
    )
    assert "in-place input or buffer mutations" in verdict.reason


@pytest.mark.spec("CHK-17")
def test_chk17_the_references_groupnorm_blocks_train() -> None:
    """GroupNorm blocks (no running statistics) are outlined by the reference; their training
    compile runs forward and backward: CHK-17 holds."""
    from reference.dynamo.capture import capture
    from reference.pipeline import deduplicate
    from tests.support.corpus import load_model_file

    model = load_model_file(CORPUS_DIR / "own_groupnorm.py")
    found = capture(model.model, model.example_inputs)
    original = copy_graph_module(found.gm).gm
    assert deduplicate(found.gm, found.tracker).subgraphs
    report = check_transformation(original, found.gm, found.example_inputs)
    assert report.ok, report


def _exported_stack(tmp_path: Path) -> Capture:
    """`Stack` (three Linear + ReLU residual blocks) exported, saved and loaded as `verify`
    loads a `.pt2`."""
    torch.manual_seed(0)
    path = tmp_path / "stack.pt2"
    torch.export.save(torch.export.export(Stack(), (torch.randn(4, 8),)), str(path))
    return load_pt2(path)


def _body(found: Capture) -> torch.fx.Graph:
    body = found.gm.get_submodule("subgraph_0")
    assert isinstance(body, torch.fx.GraphModule)
    return body.graph


@pytest.mark.spec("RPL-22", "CHK-17")
def test_rpl22_an_exported_program_s_subgraph_trains(tmp_path: Path) -> None:
    """export's `val`s say a linear of a weight that requires grad does not; the subgraph's say
    what autograd gives, so the deduplicated program compiles for training (it failed with
    `outs_to_grad length (1) != tangents length (0)`) and CHK-17 holds without a note."""
    found = _exported_stack(tmp_path)
    linear = next(n for n in found.gm.graph.nodes if n.name == "linear")
    assert not linear.meta["val"].requires_grad  # export's value: autograd untracked
    original = copy_graph_module(found.gm).gm
    deduplicate(found.gm, found.tracker)
    body = _body(found)
    assert next(n for n in body.nodes if n.name == "linear").meta["val"].requires_grad
    assert compile_and_train(found.gm, found.example_inputs) == HOLDS
    verdict = check_transformation(original, found.gm, found.example_inputs).verdict_of(RUNTIME)
    assert isinstance(verdict, Holds) and "AOTAutograd" not in verdict.note, verdict


@pytest.mark.spec("CHK-17")
def test_chk17_a_training_failure_of_the_transformed_module_alone_is_unknown(
    tmp_path: Path,
) -> None:
    """With export's values put back into the subgraph, only the transformed module fails its
    training compile, for a reason no obligation names: CHK-17 is unknown and quotes it (it was
    a holds with a note)."""
    found = _exported_stack(tmp_path)
    original = copy_graph_module(found.gm).gm
    deduplicate(found.gm, found.tracker)
    for node in _body(found).nodes:
        value = node.meta.get("val")
        if node.op != "placeholder" and isinstance(value, torch.Tensor):
            node.meta["val"] = value.detach()  # what export says: no value requires grad
    verdict = check_transformation(original, found.gm, found.example_inputs).verdict_of(RUNTIME)
    assert isinstance(verdict, Unknown), verdict
    assert verdict.reason.startswith(
        "CHK-17: torch's training runtime (AOTAutograd) fails on the transformed module only: "
        "AssertionError: outs_to_grad length (1) != tangents length (0)"
    )


@pytest.mark.spec("CHK-17")
def test_chk17_the_no_op_compiler_runs_the_graph_as_it_is_now() -> None:
    """On CUDA torch's partitioner adds graph-safe RNG inputs to the forward after its code was
    generated; the no-op compiler generates it again, as `aot_eager` does, so the compiled
    forward takes every input the graph has (an H200 run failed on the stale code)."""
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    (x,) = gm.graph.find_nodes(op="placeholder")
    with gm.graph.inserting_after(x):
        state = gm.graph.placeholder("fwd_rng_state_0")
    (out,) = gm.graph.find_nodes(op="output")
    with gm.graph.inserting_before(out):
        out.args = (gm.graph.call_function(operator.add, (out.args[0], state)),)
    compiled = no_op_compiler(gm, [])
    torch.testing.assert_close(compiled([torch.ones(2), torch.ones(2)]), torch.full((2,), 3.0))


@pytest.mark.spec("CHK-17")
def test_chk17_a_graph_returning_no_tuple_is_not_compiled_and_says_so() -> None:
    """`aot_module_simplified` refuses a graph that returns no tuple (the bench's synthetic
    graphs, a traced function): both sides would be refused after a whole trace (17 of 18 s of
    check_transformation at 2.4k nodes), so it is not compiled and the verdict says why."""
    gm = torch.fx.symbolic_trace(lambda x: torch.sin(x) * 2)
    x = torch.ones(3, requires_grad=True)
    assert not returns_tuple(gm)
    assert training(gm, gm, [x]) == Holds(NO_TUPLE)


@pytest.mark.spec("CHK-19")
def test_chk19_the_runtime_probe_and_the_training_compile_wait_for_their_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CHK-17's two runs each wait for their kernels (`runs.settled`), as every other run does,
    so a device-side assert is theirs: what they waited for is recorded here (on the CPU
    `settled` waits for nothing, so it is recorded, not faked)."""
    import checker.proof.numeric
    import checker.proof.training
    from reference.dynamo.capture import capture
    from tests.support.corpus import load_model_file

    waited: list[str] = []
    for module in (checker.proof.numeric, checker.proof.training):
        name = module.__name__.rsplit(".", 1)[1]
        monkeypatch.setattr(module, "settled", lambda _values, name=name: waited.append(name))
    model = load_model_file(CORPUS_DIR / "own_groupnorm.py")
    found = capture(model.model, model.example_inputs)
    original = copy_graph_module(found.gm).gm
    assert deduplicate(found.gm, found.tracker).subgraphs
    assert check_transformation(original, found.gm, found.example_inputs).ok
    assert waited == ["numeric", "training"]
