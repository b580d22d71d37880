"""Sanity tests of the torch side of the differential harness (`tests/support/corpus.py`): on
torch it must reproduce the documented behaviour (/work/shared/torch-2.13-behaviour.md,
scenarios T1-T11, D1, D5 and bugs B1-B4), and every corpus file must be well formed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from reference.torch_version import TORCH, release
from tests.support.corpus import (
    CORPUS_DIR,
    corpus_files,
    dedup_refusals,
    eager_and_compiled,
    load_model_file,
    torch_compiled_graph,
    torch_mutations,
    torch_region_groups,
)
from tests.support.dedup_summary import summarize_dedup

pytestmark = pytest.mark.torch_diff

SCENARIO = re.compile(r"^(T([1-9]|1[01])|D([1-6]|1[5-8])|B[1-4]|A([1-9]|10)|own)$")
# B13 (provisional, not in the behaviour doc): see corpus/own_inplace_inside.py
WRONG_RESULT_BUGS = ("B1", "B2", "B3", "B13", "SRT-10", "N9", "N4", "N12")
CRASH_BUGS = ("N1", "N3", "N10", "N11", "N15")  # torch.compile with dedup raises (findings.md)
# End to end, torch.compile gives eager's result: N14 (the subgraph updates the running stats in
# place; training compilation fails, tests/proof/test_training_runtime.py) and N5 on
# own_dynamic_shape_blocks (Dynamo drops the dead getitems before the pass end to end; on the
# capture, torch's subgraph returns the dead int)
# N16: the forward is right; backward fails (test_n16_training_fails_with_dedup_only)
END_TO_END_RIGHT = ("N14", "N5", "N16")
# N10 and N11 fail torch's own sort (an AssertionError) or, on 2.15.0, an erasure (a
# RuntimeError); N11's later-group form raises a TypeError when the compiled graph runs
CRASHES = (torch._dynamo.exc.InternalTorchDynamoError, AssertionError, RuntimeError, TypeError)


def corpus(name: str) -> Path:
    return CORPUS_DIR / f"{name}.py"


def prefixed(prefix: str) -> Callable[[str], str]:
    """An `assert_close` message that names the file."""
    return lambda message: f"{prefix}: {message}"


def test_every_corpus_file_is_well_formed_and_listed() -> None:
    readme = (CORPUS_DIR / "README.md").read_text()
    files = corpus_files()
    assert len(files) >= 32
    for path in files:
        model_file = load_model_file(path)
        assert SCENARIO.match(model_file.scenario), path.name
        assert model_file.description, path.name
        known = (None, "B4", *WRONG_RESULT_BUGS, *CRASH_BUGS, *END_TO_END_RIGHT)
        assert model_file.torch_wrong in known, path.name
        assert model_file.device in ("cpu", "cuda"), path.name
        assert f"`{path.name}`" in readme, f"{path.name} missing from README.md"
    assert sum(load_model_file(p).scenario == "own" for p in files) >= 12


def test_t1_three_regions_of_five() -> None:
    assert torch_region_groups(corpus("t01_single_region_group")) == [
        [
            ["x0", "y0", "sum_1", "sum_2", "z"],
            ["x0_1", "y0_1", "sum_3", "sum_4", "z_1"],
            ["x0_2", "y0_2", "sum_5", "sum_6", "z_2"],
        ]
    ]


def test_t3_single_node_regions_are_dropped() -> None:
    assert torch_region_groups(corpus("t03_no_single_node_regions")) == []


def test_t5_bf16_call_stays_out() -> None:
    assert torch_region_groups(corpus("t05_mismatched_dtypes")) == [
        [
            ["x1", "y1", "sum_1", "o0"],
            ["x1_1", "y1_1", "sum_2", "o2"],
            ["x1_2", "y1_2", "sum_3", "o4"],
            ["x1_3", "y1_3", "sum_4", "o5"],
        ]
    ]


def test_t11_ints_in_nested_tuples_are_keyed() -> None:
    assert torch_region_groups(corpus("t11_non_tensor_arg_hashing")) == [
        [["y", "o1"], ["y_1", "o2"], ["y_2", "o3"]]
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("t08_mutation_tracking_simple", {"sin_": [0], "add_": [0]}),
        ("t09_mutation_tracking_setitem", {"setitem": [0]}),
        ("t10_mutation_tracking_allow_in_graph", {"o0": [0], "sin_": [0]}),
    ],
)
def test_t8_t9_t10_mutation_maps(name: str, expected: dict[str, list[int]]) -> None:
    assert torch_mutations(corpus(name)) == expected


def test_d1_one_subgraph_three_invokes() -> None:
    summary = summarize_dedup(torch_compiled_graph(corpus("d01_single_subgraph")))
    (subgraph,) = summary.subgraphs
    assert subgraph.name == "subgraph_0"
    assert subgraph.inputs == ("subgraph_input_l_x_", "subgraph_input_l_y_")
    assert [(n.name, n.target) for n in subgraph.body] == [
        ("x0", "operator.add"),
        ("y0", "operator.add"),
        ("sum_1", "sum"),
        ("sum_2", "sum"),
        ("z", "operator.add"),
    ]
    assert subgraph.outputs == ("z",)
    calls = summary.invokes_of("subgraph_0")
    assert [c.operands for c in calls] == [("l_x_", "l_y_"), ("l_x_", "o1"), ("l_x_", "l_y_")]
    # the first call's result is unused: its invoke is kept, placed right after o1 = sin(y)
    order = [n.name for n in summary.order]
    assert order.index(calls[0].name) == order.index("o1") + 1
    assert not any(calls[0].name in n.args for n in summary.order)


def test_d5_mutated_inputs_are_refused() -> None:
    with dedup_refusals() as refusals:
        summary = summarize_dedup(torch_compiled_graph(corpus("d05_input_mutation")))
    refused = [m for m in refusals if m.endswith("due to mutation")]
    for region in ("[x0_1, add_]", "[y0, add__1]"):
        assert any(region in m for m in refused), (region, refusals)
    assert len(refused) == 4  # both regions of both mutating groups
    (subgraph,) = summary.subgraphs
    assert [n.target for n in subgraph.body] == ["sum", "sum", "operator.add"]
    calls = summary.invokes_of(subgraph.name)
    assert [c.operands for c in calls] == [("x0", "l_y_"), ("clone", "clone_1")]
    remaining = {n.name for n in summary.order}
    assert {"x0_1", "add_", "y0", "add__1"} <= remaining


@pytest.mark.parametrize(
    "name",
    [
        "b1_float_constants",
        "b1_clamp_bounds",
        "b1_alpha",
        "b1_rounding_mode",
        "b2_targets",
        "b3_shared_input",
        "own_inplace_inside",
        "own_dropout_train",  # N4: dropout drawn once more by the runtime (seeded runs)
        "own_draws",
    ],
)
def test_wrong_results_with_dedup_only(name: str) -> None:
    """Wrong with deduplication only, on the releases before the file's `torch_right_from`
    (measured), and right from it on."""
    model_file = load_model_file(corpus(name))
    assert model_file.torch_wrong in WRONG_RESULT_BUGS
    eager, compiled = eager_and_compiled(corpus(name), dedup=False)
    torch.testing.assert_close(compiled, eager)
    eager, compiled = eager_and_compiled(corpus(name), dedup=True)
    right_from = model_file.torch_right_from
    if right_from is not None and release(TORCH.version) >= release(right_from):
        torch.testing.assert_close(compiled, eager)
        return
    with pytest.raises(AssertionError):
        torch.testing.assert_close(compiled, eager)


def test_b1_float_error_is_as_documented() -> None:
    eager, compiled = eager_and_compiled(corpus("b1_float_constants"), dedup=True)
    error = (eager[0] - compiled[0]).abs().max().item()
    assert error == pytest.approx(0.078, abs=0.005)


def test_b3_drops_z_from_the_graph_inputs() -> None:
    summary = summarize_dedup(torch_compiled_graph(corpus("b3_shared_input")))
    assert [n.name for n in summary.order if n.op == "placeholder"] == ["l_x_", "l_y_"]
    assert [c.operands for c in summary.invokes] == [("l_x_",), ("l_y_",)]


def test_b3_reversed_is_refused_and_correct() -> None:
    with dedup_refusals() as refusals:
        summary = summarize_dedup(torch_compiled_graph(corpus("b3_shared_input_reversed")))
    assert len(summary.invokes) == 1
    assert len(refusals) == 1 and "aliasing" in refusals[0]
    eager, compiled = eager_and_compiled(corpus("b3_shared_input_reversed"), dedup=True)
    torch.testing.assert_close(compiled, eager)


def test_b4_groups_overlap_but_result_is_correct() -> None:
    sin_add, exp_sin = torch_region_groups(corpus("b4_overlap"))
    assert [len(r) for r in sin_add] == [2, 2] and [len(r) for r in exp_sin] == [2, 2, 2]
    shared = {n for r in sin_add for n in r} & {n for r in exp_sin for n in r}
    assert shared == {sin_add[0][0], sin_add[1][0]}  # the sin roots of the [exp, sin] group
    with pytest.warns(UserWarning, match="on an already erased node"):
        eager, compiled = eager_and_compiled(corpus("b4_overlap"), dedup=True)
    torch.testing.assert_close(compiled, eager)


@pytest.mark.filterwarnings("ignore:erase_node.*already erased:UserWarning")  # B4
def test_torch_wrong_flags_agree_with_dedup_results() -> None:
    """Every runnable corpus file gives eager results under dedup unless it names a
    wrong-result bug (the fake CUDA files are captured only)."""
    for path in corpus_files():
        model_file = load_model_file(path)
        if model_file.device != "cpu" or model_file.torch_wrong in WRONG_RESULT_BUGS:
            continue
        if model_file.torch_wrong in CRASH_BUGS:
            with pytest.raises(CRASHES):
                eager_and_compiled(path, dedup=True)
            continue
        eager, compiled = eager_and_compiled(path, dedup=True)
        torch.testing.assert_close(compiled, eager, msg=prefixed(path.name))


def test_n16_training_fails_with_dedup_only() -> None:
    """`own_saved_operand.py` runs backward under `torch.compile(backend="aot_eager")`, and with
    deduplication backward fails: the call saved `x`, which `x.add_(1)` then wrote (N16). (The
    gradient without deduplication is not eager's either: AOTAutograd's own bug, findings.md
    "Observed outside the pass", so only that it runs is asserted.)"""
    model_file = load_model_file(corpus("own_saved_operand"))

    def train(dedup: bool) -> torch.Tensor:
        torch._dynamo.reset()
        x, w = (t.detach().clone() for t in model_file.example_inputs)
        w.requires_grad_()
        with torch._dynamo.config.patch(use_graph_deduplication=dedup):
            compiled = torch.compile(model_file.model, backend="aot_eager", fullgraph=True)
            compiled(x, w).sum().backward()
        grad: torch.Tensor | None = w.grad
        assert grad is not None
        return grad

    assert bool(train(dedup=False).isfinite().all())
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed, match="modified by an inplace"):
        train(dedup=True)


def test_fake_cuda_files_capture() -> None:
    fake = [p for p in corpus_files() if load_model_file(p).device == "cuda"]
    assert len(fake) == 2
    for path in fake:
        assert len(torch_region_groups(path)) == 1
        assert summarize_dedup(torch_compiled_graph(path)).invokes
