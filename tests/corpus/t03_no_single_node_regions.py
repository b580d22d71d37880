"""T3 `test_no_single_node_regions`: three identical single-node regions whose only input is a
placeholder cannot grow, so no group survives."""

from __future__ import annotations

import torch

scenario = "T3"
description = "i(x) = x + 1 three times: no region of two nodes, result []"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor) -> torch.Tensor:
    return x + 1


def model(x: torch.Tensor) -> torch.Tensor:
    return inner(x) + inner(x) + inner(x)


example_inputs = (torch.rand(10, 10, generator=torch.Generator().manual_seed(0)),)
