"""A float attribute per layer under `dynamic=True` (spec chapter 03, RPL-21 and RPL-27): Dynamo
passes each layer's float as a 0-d tensor input read by `.item()`, a SymFloat of its own symbol.
It cannot be an operand (RPL-21), and taking the `.item()` into the subgraph does not help:
torch's runtime traces the body, where the float has no hint, and an op that needs a Python
float (`scaled_dot_product_attention`'s `scale`) cannot guard on it. So the layers' regions stop
before such nodes, as the tracker's keys (the SymFloat's expression) already make them do."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checker.proof.check import check_transformation
from checker.proof.report import NUMBERS, RUNTIME
from checker.proof.verdict import Holds, Unknown
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate, outline_groups
from tests.reference.test_deps import by_name


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Linear(8, 8)
        self.scale = 0.35

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self.w(x)
        return x + F.scaled_dot_product_attention(q, q, q, scale=self.scale)


def _net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(*(_Block() for _ in range(3)))


@pytest.mark.spec("RPL-21", "RPL-27")
def test_rpl21_a_per_layer_float_taken_into_the_subgraph_fails_torch_s_runtime() -> None:
    """The three blocks' `sdpa(..., scale=item)` nodes key apart (`zf0`, `zf1`, `zf2`), so
    nothing is replaced. Grouped by hand with their `.item()` inside (the float's 0-d tensor is
    then the operand, which RPL-21 takes), the result computes the same numbers, but torch's
    `invoke_subgraph` runtime raises `GuardOnDataDependentSymNode` on the float: no correct
    deduplication of these blocks' attention exists for torch 2.13's runtime."""
    x = torch.randn(2, 5, 8)
    found = capture(_net(), (x,), dynamic=True)
    assert not deduplicate(copy_graph_module(found.gm).gm, found.tracker).replaced
    n = by_name(found.gm.graph)
    items = [n[f"item{s}"] for s in ("", "_1", "_2")]
    assert all(isinstance(i.meta["example_value"], torch.SymFloat) for i in items)
    group = []
    for item in items:  # [item, sdpa, the residual add]
        (sdpa,) = item.users
        (add,) = sdpa.users
        assert add.target is operator.add
        group.append([item, sdpa, add])
    original = copy_graph_module(found.gm).gm
    result = outline_groups(found.gm, [group], {})
    assert len(result.replaced) == 3 and not result.refused
    report = check_transformation(original, found.gm, found.example_inputs)
    verdicts = {o.id: o.verdict for o in report.obligations}
    assert isinstance(verdicts[NUMBERS], Holds)
    runtime = verdicts[RUNTIME]
    assert isinstance(runtime, Unknown) and "GuardOnDataDependentSymNode" in runtime.reason
