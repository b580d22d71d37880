"""T7 `test_mismatched_global_state` (inference_mode): the global state is part of the key, so the
two calls under it form their own group, listed first (its earliest member is later)."""

from __future__ import annotations

import torch

scenario = "T7"
description = "j twice with grad, twice under inference_mode: two groups of 2 regions of 4"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x1 = x * 1
    y1 = y + 1
    return x1 + y1.sum()


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    o4 = inner(x, y)
    o5 = inner(x, y)
    with torch.inference_mode():
        o0 = inner(x, y)
        o2 = inner(x, y)
    return o4 + o5 + o0 + o2


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
