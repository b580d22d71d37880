"""Dead code around regions (spec chapter 03, RPL-27; chapter 06, CHK-3): a value nothing live
reads is no reason for a region to return it, replacing the region erases it, and the checker
lets a transformation drop it."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.fx

from checker.proof.check import check_transformation
from checker.proof.dependencies import dead_indices, match_graphs
from checker.proof.flat import flatten
from checker.proof.verdict import Holds, Violated
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from tests.support.corpus import CORPUS_DIR, load_model_file


@pytest.mark.spec("RPL-27", "RPL-23")
def test_rpl27_a_size_only_dead_code_reads_does_not_refuse_the_group() -> None:
    """Blocks reading `b, t, c = x.shape` under dynamic shapes: blocks 2-4 leave
    `getitem(size, 2)` unused. The `Size` is no output (it would be RPL-23), the three regions
    are replaced, the dead getitems are erased with them, and the result is proved."""
    model = load_model_file(CORPUS_DIR / "own_dynamic_shape_blocks.py")
    found = capture(model.model, model.example_inputs, model.dynamic)
    dead = [n.name for n in found.gm.graph.nodes if n.target is operator.getitem and not n.users]
    assert dead == ["getitem_5", "getitem_8", "getitem_11"]
    original = copy_graph_module(found.gm).gm
    result = deduplicate(found.gm, found.tracker)
    assert not result.refused and len(result.replaced) == 3
    names = {n.name for n in found.gm.graph.nodes}
    assert names.isdisjoint(dead)
    report = check_transformation(original, found.gm, found.example_inputs)
    assert report.ok, report


def _graph(dead: bool, live: bool, write: bool) -> torch.fx.GraphModule:
    """`out = cos(x)`, with an unused `sin(x)` when `dead`, an unused `y = x * 1; y.add_(1)`
    (an effect) when `write`; without `live` the output is `x` itself."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    if dead:
        g.call_function(torch.sin, (x,))
    if write:
        y = g.call_function(torch.mul, (x, 1))
        g.call_method("add_", (y, 1))
    g.output(g.call_function(torch.cos, (x,)) if live else x)
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.spec("CHK-3", "RPL-27")
def test_chk3_dropping_dead_code_holds_dropping_anything_else_does_not() -> None:
    original = flatten(_graph(dead=True, live=True, write=True))
    assert dead_indices(original) == frozenset({1})  # sin; the write and its input are live
    assert isinstance(match_graphs(original, flatten(_graph(False, True, True))).verdict, Holds)
    for other in (_graph(True, False, True), _graph(False, True, False)):
        assert isinstance(match_graphs(original, flatten(other)).verdict, Violated)
