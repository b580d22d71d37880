"""T1 `test_get_regions_single_region_group`: `inner` called from three sites merges into one
group of three regions of five nodes (tracker keys use the helper's own line, not the caller's)."""

from __future__ import annotations

import torch

scenario = "T1"
description = "inner(x, y) three times: one group, 3 regions of 5 nodes"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = x + 1
    y0 = y + 2
    z = x0.sum() + y0.sum()
    return z


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    o0 = inner(x, y)
    o1 = torch.sin(y)
    o2 = inner(x, o1)
    o3 = inner(x, y)
    o4 = o3 * o3
    return o2 * o4 + o0


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
