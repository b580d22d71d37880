"""SPL-15: partitions respect in-place mutation order (a torch divergence)."""

from __future__ import annotations

import pytest
import torch
from torch.fx.passes.split_module import split_module as torch_split_module

from reference.dynamo.capture import capture, fresh_inputs
from reference.split import split_module
from tests.support.corpus import CORPUS_DIR, load_model_file


def _calls(gm: torch.fx.GraphModule) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_module"]


def test_spl15_mutation_order_kept() -> None:
    """SPL-15: d15 cut in thirds: torch reads `x` after `x.add_(x)`; the reference does not."""
    model_file = load_model_file(CORPUS_DIR / "d15_mutation_ordering.py")
    c = capture(model_file.model, model_file.example_inputs, model_file.dynamic)
    calls = [n for n in c.gm.graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
    third = len(calls) // 3
    position = {n: i for i, n in enumerate(calls)}

    def policy(node: torch.fx.Node) -> int:
        return position[node] // third

    want = c.gm(*fresh_inputs(c.example_inputs))
    ours = split_module(c.gm, None, policy)
    theirs = torch_split_module(c.gm, c.gm, policy)
    assert _calls(ours) == sorted(_calls(ours))
    assert _calls(theirs) != sorted(_calls(theirs))
    torch.testing.assert_close(ours(*fresh_inputs(c.example_inputs)), want)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(theirs(*fresh_inputs(c.example_inputs)), want)
