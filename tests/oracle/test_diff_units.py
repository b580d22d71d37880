"""Unit tests of the differential oracle's pieces on hand-built graphs (spec chapter 08, DIF):
canonical forms, faults, policies, delta debugging, graph sources and bad input."""

from __future__ import annotations

import operator
import runpy
import sys
from pathlib import Path

import pytest
import torch
import torch.fx

from checker.io.model_file import load_model_file, model_from_source
from checker.oracle.compare.canon import canonical_graph, first_difference
from checker.oracle.compare.faults import Overlap, Unequal, order_faults, region_faults
from checker.oracle.compare.graph_level import sort_case, split_case
from checker.oracle.diff.driver import run_diff
from checker.oracle.protocol import parts_of
from checker.oracle.repro.ddmin import ddmin
from checker.oracle.repro.graph_source import Unwritable, graph_source, target_expr
from checker.oracle.repro.source_reduce import keep_units, source_units, strip_metadata
from checker.oracle.sides.cases import SplitCase, partition_ids
from checker.oracle.sides.loading import load_impl
from checker.oracle.sides.sides import make_sides
from reference.errors import FxOracleError
from reference.torch_version import TORCH


def _traced(scale: float, names: str = "") -> torch.fx.GraphModule:
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) * scale + y

    gm = torch.fx.symbolic_trace(f)
    for i, node in enumerate(gm.graph.nodes):
        node.name = f"{names}{node.name}{i}" if names else node.name
    return gm


@pytest.mark.spec("DIF-3")
def test_dif3_canonical_form_forgets_names_and_keeps_constants() -> None:
    assert canonical_graph(_traced(0.5)) == canonical_graph(_traced(0.5, names="renamed_"))
    a, b = canonical_graph(_traced(0.5)), canonical_graph(_traced(2.0))
    assert a != b
    assert first_difference(a, b, ("reference", "torch")) == (
        "node 3: reference `call_function operator.mul(%2, 0.5)`, "
        "torch `call_function operator.mul(%2, 2.0)`"
    )
    assert "0x" not in str(a)  # targets by qualified name, never an address


def test_dif3_dynamo_clean_up_is_applied_to_both_sides() -> None:
    """An unused getitem (Dynamo removes it after the pass) does not make a divergence."""
    gm = _traced(0.5)
    plain = canonical_graph(gm)
    x = next(iter(gm.graph.nodes))
    with gm.graph.inserting_after(x):
        gm.graph.call_function(operator.getitem, (x, 0))
    assert canonical_graph(gm) == plain


def _chain() -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    a = g.call_function(operator.add, (x, 1))
    b = g.call_function(operator.mul, (y, 2))
    c = g.call_function(operator.add, (a, b))
    d = g.call_function(torch.sin, (c,))
    g.output((d,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.spec("DIF-4")
def test_dif4_region_faults_name_overlap_and_unequal_nodes() -> None:
    gm = _chain()
    unequal = region_faults(gm, ((("add", "add_1"), ("mul", "sin")),))
    assert tuple(str(f) for f in unequal) == (
        "group 0: mul `call_function operator.mul(NoneType, 2)` is not add "
        "`call_function operator.add(NoneType, 1)`",
        "group 0: sin `call_function torch.sin(NoneType)` is not add_1 "
        "`call_function operator.add(NoneType, NoneType)`",
    )
    assert all(isinstance(f, Unequal) for f in unequal)
    overlap = region_faults(gm, ((("add",), ("add",)),))
    assert tuple(str(f) for f in overlap) == ("add is in group 0 region 0 and in group 0 region 1",)
    assert overlap == (Overlap("add", "group 0 region 0", 0, 1),)


@pytest.mark.spec("DIF-5")
def test_dif5_order_faults() -> None:
    gm = _chain()
    nodes = {n.name: n for n in gm.graph.nodes}
    assert order_faults(gm, {}) == ""
    assert order_faults(gm, {nodes["add"]: [nodes["mul"]]}) == "add comes before its dependency mul"
    nodes["output"].prepend(nodes["sin"])
    nodes["x"].prepend(nodes["output"])
    assert order_faults(gm, {}) == "the output is node 0 of 7, not the last"


@pytest.mark.spec("DIF-5")
def test_dif5_split_policies() -> None:
    """`inputs` gives B7's pattern: a=x+1 -> 2, b=y*2 -> 1, c=a+b -> 2 (p2 appears first)."""
    gm = _chain()
    ids = {n.name: p for n, p in partition_ids("inputs", gm).items()}
    assert ids == {"add": 2, "mul": 1, "add_1": 2, "sin": 2}
    assert list(partition_ids("thirds", gm).values()) == [0, 0, 1, 2]
    assert list(partition_ids("reverse", gm).values()) == [3, 2, 1, 0]
    with pytest.raises(FxOracleError, match="unknown split policy"):
        partition_ids("nope", gm)


@pytest.mark.spec("DIF-4", "DIF-22")
def test_dif4_b7_keep_original_order_keyerror_blames_torch() -> None:
    """torch's split raises where the reference's is right: a refusal of a valid case."""
    sides = make_sides("torch", "split")
    inputs = (torch.randn(3), torch.randn(3))
    found = split_case(_chain(), inputs, sides, SplitCase("inputs", True))
    assert [(str(d.component), str(d.kind), d.wrong) for d in found] == [
        ("split", "refusal", "torch")
    ]
    assert found[0].detail == "torch refused a case the reference splits correctly: KeyError: 'mul'"
    assert split_case(_chain(), inputs, sides, SplitCase("inputs", False)) == []


def test_dif5_sort_scrambles_agree_with_torch_on_a_plain_graph() -> None:
    sides = make_sides("torch", "sort")
    assert [d for s in ("reversed", "shuffle-1") for d in sort_case(_chain(), sides, s)] == []


@pytest.mark.spec("DIF-7")
def test_dif7_ddmin_finds_the_needed_units_within_budget() -> None:
    calls: list[tuple[int, ...]] = []

    def keeps(units: tuple[int, ...]) -> bool:
        calls.append(units)
        return {3, 7} <= set(units)

    assert ddmin(range(10), keeps, budget=100) == (3, 7)
    calls.clear()
    ddmin(range(10), keeps, budget=5)
    assert len(calls) == 5


SOURCE = '''"""doc"""
scenario = "B2"
torch_wrong: str | None = "B2"


def model(x):
    outs = []
    for f in (torch.sin, torch.cos, torch.sin):
        outs.append(f(x) * 2)
    return tuple(outs)
'''


@pytest.mark.spec("DIF-7")
def test_dif7_source_units_are_statements_and_loop_elements() -> None:
    source = strip_metadata(SOURCE)
    assert "scenario" not in source and "torch_wrong" not in source and "doc" not in source
    # model's 2 statements (0-1; its `return` is the output, never a unit), then the loop's
    # 3 elements (2-4) and its body (5)
    assert source_units(source) == 6
    smaller = keep_units(source, {0, 1, 3, 4, 5})  # drop the first sin
    assert "for f in (torch.cos, torch.sin):" in smaller and "return tuple(outs)" in smaller
    assert "return tuple(outs)" in keep_units(source, set())  # the output survives every shrink


@pytest.mark.spec("DIF-8")
def test_dif8_graph_source_rebuilds_the_graph(tmp_path: Path) -> None:
    gm = _chain()
    inputs = (torch.randn(3), torch.randn(3).requires_grad_())
    source = graph_source(gm, inputs)
    assert source is not None
    script = tmp_path / "g.py"
    script.write_text("import builtins\nimport operator\n\nimport torch\n\n" + source)
    built = runpy.run_path(str(script))
    assert canonical_graph(built["gm"]) == canonical_graph(gm)
    assert [t.requires_grad for t in built["inputs"]] == [False, True]


def test_dif8_target_expressions_are_importable_names() -> None:
    assert target_expr(torch.sin) == "torch.sin"
    assert target_expr(operator.getitem) == "operator.getitem"
    assert target_expr(torch._C._set_grad_enabled) == "torch._C._set_grad_enabled"
    assert target_expr(torch.ops.aten.add.Tensor) == "torch.ops.aten.add.Tensor"
    with pytest.raises(Unwritable):
        target_expr(lambda t: t)


@pytest.mark.spec("DIF-1")
def test_dif1_parts_and_loading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parts_of(load_impl("torch").impl) == ("tracker", "dedup", "sort", "split")
    if TORCH.split_module_simple:
        assert parts_of(load_impl("torch-simple").impl) == ("split",)
    else:  # torch 2.11, 2.12: refused, one line
        with pytest.raises(FxOracleError, match="has no split_module_simple"):
            load_impl("torch-simple")
    (tmp_path / "my_impls.py").write_text(
        "class OnlySort:\n"
        "    def stable_sort(self, graph, deps):\n"
        "        pass\n"
        "nothing = object()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert parts_of(load_impl("my_impls:OnlySort").impl) == ("sort",)
    for bad, message in [
        ("my_impls:nothing", "implements none of"),
        ("my_impls:missing", "AttributeError"),
        ("no_such_module_xyz:thing", "ModuleNotFoundError"),
        ("nonsense", "expected reference, torch, torch-simple, module:attr or path/to/file"),
    ]:
        with pytest.raises(FxOracleError, match=message):
            load_impl(bad)
    with pytest.raises(FxOracleError, match="implements no part of component split"):
        make_sides("my_impls:OnlySort", "split")
    sys.modules.pop("my_impls", None)


@pytest.mark.spec("DIF-10")
def test_dif10_bad_requests_are_fxoracle_errors(tmp_path: Path) -> None:
    with pytest.raises(FxOracleError, match="nothing to compare"):
        run_diff([], "torch")
    with pytest.raises(FxOracleError, match="unknown component"):
        run_diff([model_from_source("m", "model = abs\nexample_inputs = (1,)\n")], "torch",
                 component="everything")  # fmt: skip
    with pytest.raises(FxOracleError, match="no such file"):
        run_diff([load_model_file(tmp_path / "missing.py")], "torch")
