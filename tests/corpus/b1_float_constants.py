"""B1 (float constants): floats are not part of torch's key, so the three nested calls with
scales 0.5, 2.0 and 3.0 merge and every call computes with region 0's constant."""

from __future__ import annotations

import torch

scenario = "B1"
description = "b(b(b(x, .5), 2.), 3.) with b(x, s) = cos(sin(x) * s): wrong result with dedup"
torch_wrong: str | None = "B1"
tracking_only = False


def block(x: torch.Tensor, s: float) -> torch.Tensor:
    return torch.cos(torch.sin(x) * s)


def model(x: torch.Tensor) -> torch.Tensor:
    return block(block(block(x, 0.5), 2.0), 3.0)


example_inputs = (torch.rand(8, 8, generator=torch.Generator().manual_seed(0)),)
