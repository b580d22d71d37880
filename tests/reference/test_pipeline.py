"""`reference/pipeline.py`: the whole pass on a captured graph, keyed offline, outlines the
repeated blocks and computes what the original computes (RPL-1, TRK-6, SRT-1)."""

from __future__ import annotations

import torch

from checker.proof.check import check_transformation
from reference import deduplicate_graph
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.names import INVOKE


class Blocks(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x)) + x
        return x


def test_rpl1_the_pipeline_outlines_repeated_blocks_from_metadata_alone() -> None:
    torch.manual_seed(0)
    model, x = Blocks(), torch.randn(4, 8, requires_grad=True)  # every block reads a grad value
    c = capture(model, (x,))  # its live tracker is not used: keys come from metadata
    gm, inputs = c.gm, c.example_inputs
    original = copy_graph_module(gm).gm
    result = deduplicate_graph(gm)
    calls = [n for n in gm.graph.nodes if n.target is INVOKE]
    assert len(calls) == 3 and len(result.subgraphs) == 1, gm.graph
    assert {r.region for r in result.replaced} == {0, 1, 2}
    report = check_transformation(original, gm, inputs)
    assert report.ok, report.violations
    torch.testing.assert_close(gm(*inputs), original(*inputs))
