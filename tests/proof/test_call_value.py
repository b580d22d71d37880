"""A call's example value lists one value per subgraph output, in the subgraph's order (spec
chapter 03, RPL-4: a tuple output's elements flattened), and CHK-1 checks it: later passes read a
call's results from it."""

from __future__ import annotations

import pytest
import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

from checker.proof.check import check_transformation
from checker.proof.report import WELL_FORMED
from checker.proof.verdict import Violated
from reference.graph_copy import copy_graph_module
from reference.names import INVOKE
from reference.pipeline import deduplicate_graph


def _split_each(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Three `split(sin(.), [1, 1, 2])`, each with another element used."""
    a = torch.split(torch.sin(x), [1, 1, 2])
    b = torch.split(torch.sin(y), [1, 1, 2])
    c = torch.split(torch.sin(z), [1, 1, 2])
    return a[0].cos(), b[1].exp(), c[2].tanh()


def _traced() -> tuple[torch.fx.GraphModule, list[torch.Tensor]]:
    gm = torch.fx.symbolic_trace(_split_each)
    inputs = [torch.randn(4, 5, generator=torch.Generator().manual_seed(k)) for k in range(3)]
    mode = FakeTensorMode()
    FakeTensorProp(gm, mode).propagate(*[mode.from_tensor(t) for t in inputs])
    return gm, inputs


@pytest.mark.spec("RPL-4", "CHK-1")
def test_rpl4_a_calls_value_has_every_output_even_one_no_getitem_reads() -> None:
    gm, inputs = _traced()
    original = copy_graph_module(gm).gm
    result = deduplicate_graph(gm)
    assert len(result.replaced) == 3
    calls = [n for n in gm.graph.nodes if n.target is INVOKE]
    shapes = [[tuple(v.shape) for v in call.meta["example_value"]] for call in calls]
    assert shapes == [[(1, 5), (1, 5), (2, 5)]] * 3
    assert check_transformation(original, gm, inputs).ok


@pytest.mark.spec("CHK-1")
def test_chk1_a_calls_value_that_misses_an_output_is_violated() -> None:
    gm, inputs = _traced()
    original = copy_graph_module(gm).gm
    deduplicate_graph(gm)
    call = next(n for n in gm.graph.nodes if n.target is INVOKE)
    call.meta["example_value"] = call.meta["example_value"][2:]
    verdict = check_transformation(original, gm, inputs).verdict_of(WELL_FORMED)
    assert isinstance(verdict, Violated), verdict
    assert "its example value has 1 values for 3 outputs" in verdict.witness
