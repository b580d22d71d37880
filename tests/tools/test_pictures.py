"""The course's text pictures are drawn from the graph and the reference's own results
(chapters 02, 04, 09): the cycle a candidate would close (EXP-8), a node's users with the extra
dependencies between them (SRT-6), one storage class's names (EFF-5)."""

from __future__ import annotations

import pytest
import torch
import torch.fx

from checker.tools.render.pictures import cycle_picture, storage_names, users_picture
from reference.dynamo.capture import capture
from reference.effects.alias_db import AliasDB
from reference.sort.deps import OrderingDeps

pytestmark = pytest.mark.filterwarnings("ignore")


def test_exp8_picture_draws_the_outside_path_back_to_the_root() -> None:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    h = g.call_function(torch.sin, (x,))
    cos = g.call_function(torch.cos, (h,))
    root = g.call_function(torch.add, (h, cos))
    g.output(root)
    lines = cycle_picture(h, [root]).splitlines()
    path = f"  {h.name} ──▶ {cos.name} ──▶ {root.name}"
    assert f"{path}   (outside, and back into the region)" in lines
    assert lines[-1].endswith(f"R ──▶ {cos.name} ──▶ R, a cycle (EXP-8)")


def test_srt6_picture_marks_each_extra_dependency_on_its_row() -> None:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    before = g.create_node("call_function", torch.sin, (x,), name="before")
    add_ = g.create_node("call_method", "add_", (x, 1), name="add_")
    after = g.create_node("call_function", torch.cos, (x,), name="after")
    g.output((before, after))
    deps = OrderingDeps.from_graph(g, {add_: [0]}).as_mapping()
    assert users_picture(x, deps, {add_}).splitlines() == [
        "x",
        "├──▶ before  reads  x",
        "├──▶ add_    writes x   ◀╌ after before",
        "└──▶ after   reads  x   ◀╌ after add_",
    ]


def test_eff5_picture_names_every_value_of_the_storage() -> None:
    def model(x: torch.Tensor) -> torch.Tensor:
        base = x.clone()
        rows = base[1:]
        return rows.t().sum() + x.sum()

    graph = capture(model, (torch.ones(3, 2),)).gm.graph
    base = next(n for n in graph.nodes if n.name == "base")
    lines = storage_names(graph, AliasDB(graph), base).splitlines()
    assert lines[0].startswith("one storage, 3 names: base, rows, ")
    assert len(lines) == 4 and "x" not in lines[0].split(": ")[1].split(", ")
