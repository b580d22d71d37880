"""CHK-18 (part of CHK-1): a call's results share no storage with its operands, nor its operands
with each other, but for the elements of one tuple (spec chapter 06)."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.fx

from checker.proof.verdict import Holds, Violated
from checker.proof.wellformed import check_wellformed
from reference import split_module
from reference.names import INVOKE

Node = torch.fx.Node


def _body(view: bool) -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    a, b = g.placeholder("a"), g.placeholder("b")
    a.meta["example_value"], b.meta["example_value"] = torch.zeros(4), torch.zeros(4)
    out = g.call_method("view", (a, -1)) if view else g.call_function(torch.add, (a, b))
    out.meta["example_value"] = a.meta["example_value"].view(-1) if view else torch.zeros(4)
    g.output((out,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _caller(operands: str, view: bool) -> torch.fx.GraphModule:
    """`invoke_subgraph(body, 's', p, q)` where (p, q) are two inputs, one input twice through a
    view, one input twice, a computed value and a view of it, or two elements of one split."""
    g = torch.fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    x.meta["example_value"], y.meta["example_value"] = torch.zeros(8), torch.zeros(4)
    fetch = g.get_attr("subgraph_0")
    if operands == "view":
        p, q = x, g.call_method("view", (x, -1))
        q.meta["example_value"] = x.meta["example_value"].view(-1)
    elif operands == "twice":
        p = q = x
    elif operands == "computed view":
        p = g.call_function(torch.sin, (x,))
        q = g.call_method("view", (p, -1))
        p.meta["example_value"] = torch.zeros(8)
        q.meta["example_value"] = p.meta["example_value"].view(-1)
    elif operands == "split":
        parts = g.call_function(torch.split, (x, 4))
        parts.meta["example_value"] = x.meta["example_value"].split(4)
        p, q = (g.call_function(operator.getitem, (parts, i)) for i in (0, 1))
        p.meta["example_value"], q.meta["example_value"] = parts.meta["example_value"]
    else:
        p, q = g.call_function(torch.sin, (y,)), y
        p.meta["example_value"] = torch.zeros(4)
    call = g.call_function(INVOKE, (fetch, "subgraph_0", p, q))
    g.output((g.call_function(operator.getitem, (call, 0)),))
    root = torch.nn.Module()
    root.add_module("subgraph_0", _body(view))
    return torch.fx.GraphModule(root, g)


@pytest.mark.spec("CHK-18", "CHK-1")
def test_chk18_operands_sharing_storage_are_violated_unless_one_tuple_s() -> None:
    found = check_wellformed(_caller("view", view=False))
    assert (
        isinstance(found, Violated) and "CHK-18: operands x and view share storage" in found.witness
    )
    assert isinstance(check_wellformed(_caller("split", view=False)), Holds)
    assert isinstance(check_wellformed(_caller("distinct", view=False)), Holds)
    twice = check_wellformed(_caller("twice", view=False))  # torch's runtime assumes no aliasing
    assert isinstance(twice, Violated) and "CHK-18: x is passed as two operands" in twice.witness


@pytest.mark.spec("CHK-18", "EFF-2")
def test_chk18_a_result_that_views_an_operand_is_violated() -> None:
    found = check_wellformed(_caller("distinct", view=True))
    assert isinstance(found, Violated), found
    assert "CHK-18: result 0 (view) shares storage with operand a" in found.witness


def _split_before_the_call(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`split_module` with the call and what follows it in a partition of their own."""
    nodes = list(gm.graph.nodes)
    call = next(i for i, n in enumerate(nodes) if n.target is INVOKE)
    rank = {n: i for i, n in enumerate(nodes)}
    return split_module(gm, gm, lambda n: int(rank[n] >= call or n.op == "get_attr"))


@pytest.mark.spec("CHK-18", "CHK-1")
@pytest.mark.parametrize(
    ("operands", "holds"),
    [("split", True), ("distinct", True), ("view", False), ("computed view", False)],
)
def test_chk18_a_tuples_elements_stay_exempt_across_split_partitions(
    operands: str, holds: bool
) -> None:
    """A split's elements reach the call through a partition's outputs and placeholders (the
    AdaLN `chunk` of diffusers' DiT, SD3 and PixArt blocks, split per region): still exempt.
    A value and its view stay violated, whether the view is made in the partition before (its
    outputs are then two getitems of one call) or the value is a graph input."""
    found = check_wellformed(_split_before_the_call(_caller(operands, view=False)))
    assert isinstance(found, Holds) if holds else isinstance(found, Violated), found
    if not holds:
        assert isinstance(found, Violated) and "CHK-18: operands" in found.witness
