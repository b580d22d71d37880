"""The reference inside Dynamo: capture at the pass (TRK-9), tracker edits honoured (TRK-12) and
the drop-in pass with torch's contract (RPL-19). The scenarios port torch's own upstream tests
(`test_graph_deduplication.py`) without an adapter: the test uses the public names only."""

from __future__ import annotations

import gc
import weakref
from contextlib import nullcontext
from typing import Any, cast
from unittest.mock import patch

import pytest
import torch
import torch.fx
from torch._dynamo.graph_deduplication import apply_graph_deduplication as torch_pass

from checker.oracle.compare.canon import canonical_graph
from checker.oracle.compare.run import model_caches_dropped
from checker.oracle.sides.torch_side import torch_dedup
from reference import GraphRegionTracker
from reference.dynamo.capture import Capture, capture
from reference.dynamo.drop_in import (
    ModuleOutputGraph,
    additional_deps,
    apply_graph_deduplication,
    deduplicate_output_graph,
    torch_form,
    use_reference,
)
from tests.support.corpus import CORPUS_DIR, keep_single_use, load_model_file
from tests.support.dedup_summary import summarize_dedup

Node = torch.fx.Node


def _captured(stem: str) -> Capture:
    f = load_model_file(CORPUS_DIR / f"{stem}.py")
    return capture(f.model, f.example_inputs, f.dynamic, with_torch_tracker=True)


class Blocks(torch.nn.Module):
    """Three blocks that read `x.shape` (dynamic: `size()`/getitem nodes in the graph)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(3):
            x = self.block(x)
        return x

    def block(self, x: torch.Tensor) -> torch.Tensor:
        b, n = x.shape[0], x.shape[1]
        return (x.reshape(b * n).sin() * 2).reshape(b, n) + 1


@pytest.mark.spec("TRK-9", "RPL-27")
def test_trk9_capture_is_the_graph_torch_s_pass_sees() -> None:
    """A dynamic model reading shapes: the captured graph keeps the `size()` accessors torch's
    pass sees (Dynamo's later clean-up would have dropped them at the backend). The reference
    installs the same subgraphs with fewer nodes than torch's raw pass gives: a `Size` that only
    dead code reads is not returned (RPL-27), where torch returns it."""
    c = capture(Blocks(), (torch.randn(4, 6),), dynamic=True, with_torch_tracker=True)
    assert any(n.target == "size" or "sym_size" in str(n.target) for n in c.gm.graph.nodes)
    ours = c.copy()
    out = ModuleOutputGraph(ours.gm, ours.tracker)
    mine = apply_graph_deduplication(out)
    theirs = torch_dedup(c.copy())
    sizes = {name: len(sub.graph.nodes) for name, sub in mine.items()}
    their_sizes = {
        n.target: len(
            cast(torch.fx.GraphModule, theirs.transformed.get_submodule(str(n.target))).graph.nodes
        )
        for n in theirs.transformed.graph.nodes
        if n.op == "get_attr"
    }
    assert sizes.keys() == their_sizes.keys() and sizes  # the same subgraphs
    assert all(sizes[k] < their_sizes[k] for k in sizes)  # measured: 12 nodes against 16
    assert len(c.example_inputs) == len(c.gm.graph.find_nodes(op="placeholder"))


@pytest.mark.spec("TRK-12")
def test_trk12_popped_nodes_never_join_a_region() -> None:
    """Upstream `test_tuple_inputs` (D17): the `split` nodes are popped from
    `node_to_duplicates`; regions stop at their getitems, as torch's do."""
    c = _captured("d17_tuple_inputs")
    groups = {}
    for name, tracker, gm in (("ours", c.tracker, c.gm), ("torch", c.torch_tracker, c.gm)):
        for node in gm.graph.find_nodes(op="call_function", target=torch.split):
            tracker.node_to_duplicates.pop(node)
        found = tracker.get_identical_regions(gm.graph)
        groups[name] = [[[n.name for n in region] for region in group] for group in found]
    assert groups["ours"] == groups["torch"]
    assert [len(r) for r in groups["ours"][0]] == [4, 4, 4, 4]
    assert not any("split" in name for region in groups["ours"][0] for name in region)


def test_trk12_without_the_edit_the_split_joins() -> None:
    c = _captured("d17_tuple_inputs")
    (group,) = c.tracker.get_identical_regions(c.gm.graph)
    assert [len(r) for r in group] == [5, 5, 5, 5] and group[0][0].target is torch.split


class Recording(ModuleOutputGraph):
    """An output graph that records the names its `install_subgraph` chose."""

    def __init__(self, gm: torch.fx.GraphModule, tracker: object) -> None:
        super().__init__(gm, tracker)
        self.installed: list[str] = []

    def install_subgraph(self, name: str, sub_gm: torch.fx.GraphModule) -> str:
        chosen = super().install_subgraph(name, sub_gm)
        self.installed.append(chosen)
        return chosen


@pytest.mark.spec("RPL-19")
def test_rpl19_contract_outside_dynamo() -> None:
    """Upstream's `MockOutputGraph` scenario: our pass installs through `install_subgraph`,
    which chooses the name, returns `{name: subgraph}`, and leaves `owning_module` alone; the
    graph equals torch's pass on the same output graph (D1, D3)."""
    for stem in ("d01_single_subgraph", "d03_multiple_subgraphs"):
        c = _captured(stem)
        ours, theirs = c.copy(), c.copy()
        owner = ours.gm.graph.owning_module
        out = Recording(ours.gm, ours.tracker)
        found = apply_graph_deduplication(out)
        installed = out.installed
        assert list(found) == installed and all(n.startswith("subgraph_") for n in installed)
        assert ours.gm.graph.owning_module is owner
        torch_pass(ModuleOutputGraph(theirs.gm, theirs.torch_tracker))
        ours.gm.recompile()
        theirs.gm.recompile()
        assert canonical_graph(ours.gm) == canonical_graph(theirs.gm), stem


def test_rpl19_deps_in_torch_s_format() -> None:
    """D15 (mutation ordering): the ordering deps equal `_populate_additional_deps`."""
    from torch._dynamo.graph_deduplication import _populate_additional_deps

    c = _captured("d15_mutation_ordering")
    theirs = _populate_additional_deps(c.gm.graph, c.torch_tracker.node_to_mutated_arg_positions)
    ours = additional_deps(c.gm.graph, c.tracker.node_to_mutated_arg_positions)
    assert {n.name: [d.name for d in ds] for n, ds in ours.items()} == {
        n.name: [d.name for d in ds] for n, ds in theirs.items() if ds
    }
    assert ours  # the mutation orders something
    d = c.copy()
    result = deduplicate_output_graph(ModuleOutputGraph(d.gm, d.tracker))
    assert [r.region for r in result.replaced] == [0, 1]  # group 0; group 1 aliases (RPL-8)
    assert [r.id for r in result.refused] == ["RPL-8", "RPL-8"]


@pytest.mark.spec("RPL-19")
def test_rpl19_drop_in_inside_torch_compile() -> None:
    """`use_reference()`: torch.compile keys with our tracker and deduplicates with our pass;
    the backend receives invoke_subgraph calls and the model computes what it did."""
    f = load_model_file(CORPUS_DIR / "d03_multiple_subgraphs.py")
    seen: list[torch.fx.GraphModule] = []
    trackers: list[Any] = []

    def backend(gm: torch.fx.GraphModule, inputs: list[Any]) -> Any:
        from torch._dynamo.symbolic_convert import InstructionTranslator

        trackers.append(InstructionTranslator.current_tx().output.region_tracker)
        seen.append(gm)
        return gm.forward

    torch._dynamo.reset()
    try:
        with use_reference(), torch._dynamo.config.patch(keep_single_use()):
            out = torch.compile(f.model, backend=backend, fullgraph=True)(*f.example_inputs)
    finally:
        torch._dynamo.reset()
    torch.testing.assert_close(
        out, load_model_file(CORPUS_DIR / "d03_multiple_subgraphs.py").model(*f.example_inputs)
    )
    assert isinstance(trackers[0], GraphRegionTracker)
    summary = summarize_dedup(seen[0])
    assert [s.name for s in summary.subgraphs] == ["subgraph_0", "subgraph_1"]
    assert len(summary.invokes) == 5


D_FILES = sorted(p.stem for p in CORPUS_DIR.glob("d*.py"))


def _compiled_graph(stem: str, reference: bool) -> tuple[torch.fx.GraphModule, Any, Any]:
    """The graph torch.compile hands its backend with deduplication on: our pass (inside
    `use_reference()`) or torch's; and the model's outputs, compiled and eager."""
    f = load_model_file(CORPUS_DIR / f"{stem}.py")
    seen: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, inputs: list[Any]) -> Any:
        seen.append(gm)
        return gm.forward

    flags = {"use_graph_deduplication": True, **keep_single_use()}
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(flags), use_reference() if reference else nullcontext():
            out = torch.compile(f.model, backend=backend, fullgraph=True)(*f.example_inputs)
    finally:
        torch._dynamo.reset()
    eager = load_model_file(CORPUS_DIR / f"{stem}.py")
    return seen[0], out, eager.model(*eager.example_inputs)


@pytest.mark.spec("RPL-19")
@pytest.mark.parametrize("stem", D_FILES)
def test_rpl19_upstream_scenarios_through_torch_compile(stem: str) -> None:
    """torch's own `test_graph_deduplication.py` scenarios (D1-D6, D15-D18, the corpus's d*
    files), run through `torch.compile` with the reference as the pass: the model computes what
    it computes eagerly, and the backend's graph has torch's invoke_subgraph calls exactly
    (same subgraphs, same operands) wherever torch is right."""
    ours, out, expected = _compiled_graph(stem, reference=True)
    torch.testing.assert_close(out, expected)
    theirs, _, _ = _compiled_graph(stem, reference=False)
    mine, torch_s = summarize_dedup(ours), summarize_dedup(theirs)
    assert mine.subgraphs == torch_s.subgraphs, stem
    assert [(c.subgraph, c.operands) for c in mine.invokes] == [
        (c.subgraph, c.operands) for c in torch_s.invokes
    ], stem


@pytest.mark.spec("RPL-19")
def test_rpl19_torch_form_prints_subgraphs_as_torch_does() -> None:
    """fxoracle's subgraph placeholders carry types (CHK-5, RPL-22); `torch_form` prints the
    module as torch's pass leaves it: the same readable text as torch's own subgraph."""
    c = _captured("d01_single_subgraph")
    ours, theirs = c.copy(), c.copy()
    apply_graph_deduplication(ModuleOutputGraph(ours.gm, ours.tracker))
    torch_pass(ModuleOutputGraph(theirs.gm, theirs.torch_tracker))
    mine = ours.gm.get_submodule("subgraph_0")
    assert isinstance(mine, torch.fx.GraphModule)
    assert "f32[" in mine.print_readable(print_output=False)  # typed, fxoracle's form
    printed = torch_form(ours.gm).get_submodule("subgraph_0")
    reference = theirs.gm.get_submodule("subgraph_0")
    assert isinstance(printed, torch.fx.GraphModule) and isinstance(reference, torch.fx.GraphModule)
    assert printed.print_readable(print_output=False) == reference.print_readable(
        print_output=False
    )


def _shape_env_of_a_dynamic_capture() -> tuple[weakref.ref[Any], int]:
    """Capture a dynamic model inside `model_caches_dropped` (torch's process-wide caches hold
    ShapeEnvs by design, DIF-13): a weak reference to its ShapeEnv, and how many fakes it
    still tracks."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x.sin() + 1).cos() + (x.sin() + 1).cos()

    with model_caches_dropped():
        c = capture(fn, (torch.randn(4, 6),), dynamic=True)
        values = [n.meta.get("example_value") for n in c.gm.graph.nodes]
        fake: Any = next(v for v in values if isinstance(v, torch.Tensor))
        env = fake.fake_mode.shape_env
        return weakref.ref(env), len(env.tracked_fakes or ())


def test_trk9_a_dynamic_capture_leaves_no_shape_env_behind() -> None:
    """TRK-9: a dropped capture's ShapeEnv (and fake mode) is collected; with its tracked fakes
    kept, the cycle through C++ SymInts keeps it alive."""
    gone, tracked = _shape_env_of_a_dynamic_capture()
    gc.collect()
    assert tracked == 0 and gone() is None, "TRK-9: the ShapeEnv outlived its capture"
    with patch("reference.dynamo.capture.untrack_fakes"):
        kept, tracked = _shape_env_of_a_dynamic_capture()
    gc.collect()
    assert tracked > 0 and kept() is not None, "the check above can see a leak"


A_FILES = sorted(p.stem for p in CORPUS_DIR.glob("a*.py"))


@pytest.mark.spec("RPL-19", "SRT-12", "RPL-25")
@pytest.mark.parametrize("stem", A_FILES)
def test_rpl19_aliasing_scenarios_through_torch_compile_match_eager(stem: str) -> None:
    """The alias corpus (views read around writes of their base, writes through views, crossed
    calls) through `torch.compile` with the reference as the pass: what eager computes, where
    torch's own pass computes other numbers (N9) or fails its sort (N10)."""
    _, out, expected = _compiled_graph(stem, reference=True)
    torch.testing.assert_close(out, expected)
