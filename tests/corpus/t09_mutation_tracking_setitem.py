"""T9 `test_mutation_tracking_setitem`: `setitem` is recorded as mutating position 0."""

from __future__ import annotations

import torch

scenario = "T9"
description = "y = x + 1; y[0] = 3: mutation map {setitem: [0]}"
torch_wrong: str | None = None
tracking_only = True


def model(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    y[0] = 3
    return y.sum()


example_inputs = (torch.rand(10, 10, generator=torch.Generator().manual_seed(0)),)
