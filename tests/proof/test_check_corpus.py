"""`check_transformation` on the differential corpus (spec chapter 06, CHK).

It accepts our deduplication, torch's where torch is right, and `split_module` results;
it rejects torch's output on the wrong-result scenarios B1, B2, B3 and B13 with the obligation
that names the cause, and torch's output where it moves nodes across a grad-mode switch.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch
import torch.fx

from checker.proof.check import check_transformation
from checker.proof.number_inputs import symbol_assignments
from checker.proof.numeric import CPU_NOTE as NUMBERS_ON_CPU
from checker.proof.report import DATAFLOW, NUMBERS, ORDERING, Report
from checker.proof.shapes.check import find_shape_env
from checker.proof.verdict import Holds, Violated
from reference.dynamo.capture import Capture, capture
from reference.fx_helpers import example_value
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from reference.split import split_module
from tests.support.corpus import CORPUS_DIR, load_model_file, torch_dedup_graph

pytestmark = pytest.mark.filterwarnings("ignore")

OURS = [
    "d01_single_subgraph.py",
    "d02_single_subgraph2.py",
    "d03_multiple_subgraphs.py",
    "d05_input_mutation.py",
    "d15_mutation_ordering.py",
    "d16_tuple_return.py",
    "d17_tuple_inputs.py",
    "b1_float_constants.py",
    "b2_targets.py",
    "b3_shared_input.py",
    "own_autocast_bf16.py",
    "own_dynamic.py",
    "own_grad_modes.py",
    "own_inplace_inside.py",
    "own_module_sublayers.py",
    "own_tuple_chunk.py",
    "t06_nested_args.py",
    "t07_global_state_no_grad.py",
]
TORCH_RIGHT = [
    "d01_single_subgraph.py",
    "d02_single_subgraph2.py",
    "d15_mutation_ordering.py",
    "d16_tuple_return.py",
    "d17_tuple_inputs.py",
    "b3_shared_input_reversed.py",
    "own_autocast_bf16.py",
    "own_dynamic.py",
    "own_tuple_chunk.py",
    "t04_mismatched_arg_shapes.py",
]
# torch's wrong results: the obligations that must be violated, and the first one's witness
TORCH_WRONG = {
    "b1_alpha.py": ({DATAFLOW, NUMBERS}, "alpha=0.25 instead of alpha=4.0"),
    "b1_float_constants.py": ({DATAFLOW, NUMBERS}, "0.5 instead of 2.0"),
    "b2_targets.py": ({DATAFLOW, NUMBERS}, "target torch.sin instead of torch.cos"),
    "b3_shared_input.py": ({DATAFLOW, NUMBERS}, "no counterpart for mul_3 = operator.mul(l_z_, 3)"),
    "own_inplace_inside.py": ({ORDERING, NUMBERS}, "h must follow add_ (mutation order)"),
}


def captured(name: str) -> Capture:
    """Our capture of a corpus file, loaded as `torch_side` loads it (same function names)."""
    info = load_model_file(CORPUS_DIR / name)
    return capture(info.model, info.example_inputs, info.dynamic)


def ours(name: str) -> tuple[torch.fx.GraphModule, torch.fx.GraphModule, Report]:
    """(original, our deduplication, the report on it)."""
    c = captured(name)
    original = copy_graph_module(c.gm).gm
    result = deduplicate(c.gm, c.tracker)
    return original, c.gm, check_transformation(original, c.gm, extra_deps=result.extra_deps)


def ids(report: Report) -> set[str]:
    return {o.id for o in report.violations}


@pytest.mark.parametrize("name", OURS)
@pytest.mark.spec("CHK-7")
def test_chk7_accepts_our_deduplication(name: str) -> None:
    _, _, report = ours(name)
    assert report.ok, report.render_text()


@pytest.mark.parametrize("name", TORCH_RIGHT)
@pytest.mark.spec("CHK-7")
def test_chk7_accepts_torch_where_torch_is_right(name: str) -> None:
    original = captured(name).gm
    report = check_transformation(original, torch_dedup_graph(CORPUS_DIR / name))
    assert report.ok, report.render_text()


@pytest.mark.parametrize("name", sorted(TORCH_WRONG))
@pytest.mark.spec("CHK-3", "CHK-4")
def test_chk3_chk4_reject_torch_on_its_wrong_results(name: str) -> None:
    """B1, B2, B3 (CHK-3: constants, targets, inputs) and B13 (CHK-4: mutation order)."""
    expected, witness = TORCH_WRONG[name]
    report = check_transformation(captured(name).gm, torch_dedup_graph(CORPUS_DIR / name))
    assert ids(report) == expected, report.render_text()
    first = report.violations[0].verdict
    assert isinstance(first, Violated) and witness in first.witness
    assert len(first.witness) < 300


@pytest.mark.parametrize(
    ("name", "expected"),
    [("t07_global_state_no_grad.py", {ORDERING}), ("own_grad_modes.py", {ORDERING, NUMBERS})],
)
@pytest.mark.spec("CHK-4", "CHK-6")
def test_chk4_torch_moves_nodes_across_grad_mode_switches(name: str, expected: set[str]) -> None:
    """Upstream: torch pins autocast, not grad mode (SRT-8). In own_grad_modes an output that
    needs no grad in the original needs grad once its nodes left the `no_grad` block: the
    inlined graph shows it (CHK-6), torch's runtime hides it by marking the call's outputs
    from the body's metadata; in t07 the numbers agree."""
    c = captured(name)
    report = check_transformation(c.gm, torch_dedup_graph(CORPUS_DIR / name), c.example_inputs)
    assert ids(report) == expected, report.render_text()
    verdict = report.verdict_of(ORDERING)
    assert isinstance(verdict, Violated) and "(global state)" in verdict.witness
    numbers = report.verdict_of(NUMBERS)
    assert isinstance(numbers, Holds) or "requires_grad True instead of False" in str(numbers)


@pytest.mark.spec("CHK-6")
def test_chk6_fake_cuda_runs_on_the_cpu_without_cuda() -> None:
    """A graph whose metadata lives on CUDA, on a machine without it: numbers on the CPU (the
    graph and the inputs moved), and the verdict says so."""
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the inputs can run")
    _, _, report = ours("own_fake_cuda_block.py")
    assert report.verdict_of(NUMBERS) == Holds(NUMBERS_ON_CPU)
    assert report.ok


def _thirds(gm: torch.fx.GraphModule) -> dict[torch.fx.Node, int]:
    nodes = list(gm.graph.nodes)
    return {n: 3 * i // len(nodes) for i, n in enumerate(nodes)}


SPLIT = ["own_residual_mlp.py", "own_dynamic.py", "d15_mutation_ordering.py"]


@pytest.mark.parametrize("name", SPLIT)
@pytest.mark.spec("CHK-3")
def test_chk3_accepts_split_module_in_original_order(name: str) -> None:
    original = captured(name).gm
    part = _thirds(original)
    split = split_module(original, None, part.__getitem__, keep_original_order=True)
    report = check_transformation(original, split)
    assert report.ok, report.render_text()


@pytest.mark.parametrize("name", SPLIT[:2])
@pytest.mark.spec("CHK-3")
def test_chk3_accepts_split_module_without_mutation(name: str) -> None:
    original = captured(name).gm
    split = split_module(original, None, _thirds(original).__getitem__)
    report = check_transformation(original, split)
    assert report.ok, report.render_text()


@pytest.mark.spec("CHK-4")
def test_chk4_split_module_reorders_partitions_across_a_mutation() -> None:
    """Upstream: with keep_original_order=False, torch's split_module runs partitions
    without data dependencies in reverse order: x.add_(x) in submod_0 now runs after submod_2
    reads x. CHK-4 catches it; the reference split keeps mutation order (SPL-15) and passes."""
    from torch.fx.passes.split_module import split_module as torch_split_module

    original = captured("d15_mutation_ordering.py").gm
    split = torch_split_module(original, original, _thirds(original).__getitem__)
    report = check_transformation(original, split)
    assert ids(report) == {ORDERING, NUMBERS}
    assert report.verdict_of(ORDERING) == Violated(
        "CHK-4: mul must follow add_ (mutation order), but submod_2/mul runs before submod_0/add_"
    )
    ours = split_module(original, None, _thirds(original).__getitem__)
    assert check_transformation(original, ours).ok


@pytest.mark.spec("CHK-13")
def test_chk13_dynamic_graphs_run_at_two_sizes() -> None:
    original = captured("own_dynamic.py").gm
    env = find_shape_env([original])
    metas = [example_value(n) for n in original.graph.nodes if n.op == "placeholder"]
    hints, shifted = symbol_assignments(metas, env)
    assert {s.name: v for s, v in hints.items()} == {"s17": 5, "s27": 8, "s77": 4, "s94": 6}
    assert {s.name: v for s, v in shifted.items()} == {"s17": 6, "s27": 9, "s77": 5, "s94": 7}


@pytest.mark.spec("CHK-13")
def test_chk13_the_report_is_deterministic() -> None:
    name = "b1_float_constants.py"
    wrong = torch_dedup_graph(CORPUS_DIR / name)
    first = check_transformation(captured(name).gm, wrong).to_json()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        second = check_transformation(captured(name).gm, wrong).to_json()
    assert first == second


def test_paths_exist() -> None:
    for name in {*OURS, *TORCH_RIGHT, *TORCH_WRONG}:
        assert Path(CORPUS_DIR / name).is_file(), name


@pytest.mark.spec("CHK-3")
def test_chk3_split_preludes_are_not_extra_nodes() -> None:
    """CHK-3 (fuzz finding C1): split re-runs grad switches as preludes (SPL-9); a switch to
    the mode already in force changes nothing and is neither paired nor reported as extra."""
    original = captured("own_grad_modes.py").gm
    calls = [n for n in original.graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
    position = {n: i for i, n in enumerate(calls)}
    split = split_module(original, None, position.__getitem__)
    preludes = [
        n
        for sub in split.children()
        if isinstance(sub, torch.fx.GraphModule)
        for n in sub.graph.nodes
        if n.target is torch._C._set_grad_enabled
    ]
    assert len(preludes) > 4, "the split replicates grad switches"
    report = check_transformation(original, split)
    assert report.ok, report.render_text()


@pytest.mark.spec("CHK-4")
def test_chk4_split_autocast_epilogues_and_preludes_pair_correctly() -> None:
    """CHK-4 (fuzz finding C2): split closes an autocast region at the end of each partition
    and re-enters it at the start of the next (SPL-9); those pairs change nothing, so the
    original enter and exit keep their pairing and their ordering edges."""
    original = captured("own_autocast_bf16.py").gm
    calls = [n for n in original.graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
    position = {n: i for i, n in enumerate(calls)}
    split = split_module(original, None, position.__getitem__)
    report = check_transformation(original, split)
    assert report.ok, report.render_text()


@pytest.mark.spec("CHK-3", "CHK-4")
@pytest.mark.parametrize("transform", ["dedup", "split"])
def test_chk3_back_to_back_autocast_blocks_of_the_original_stay_paired(transform: str) -> None:
    """CHK-3, CHK-4 (fuzz finding C3, `random_12_139`): two `with autocast` blocks of the
    original one after the other make an exit re-entered at once, a no-op pair; the checker
    once dropped it from the matching and then reported the original's exit as lost."""
    got = captured("own_autocast_back_to_back.py")
    inputs = got.example_inputs
    original = copy_graph_module(got.gm).gm
    if transform == "dedup":
        result = deduplicate(got.gm, got.tracker)
        assert len(result.replaced) == 4, "two groups of two regions, all replaced"
        transformed = got.gm
    else:
        calls = [n for n in original.graph.nodes if n.op not in ("placeholder", "output")]
        transformed = split_module(original, None, {n: i for i, n in enumerate(calls)}.__getitem__)
    report = check_transformation(original, transformed, inputs)
    assert report.ok, report.render_text()
    assert isinstance(report.verdict_of(DATAFLOW), Holds)
    assert isinstance(report.verdict_of(ORDERING), Holds)
