"""D1 `test_single_subgraph`: one subgraph called three times, the first call's result unused
(its invoke is kept and placed after `o1 = sin(y)`); inputs require grad."""

from __future__ import annotations

import torch

scenario = "D1"
description = "inner x3 (first unused): subgraph_0 [x0,y0,sum_1,sum_2,z], 3 invokes"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = x + 1
    y0 = y + 2
    z = x0.sum() + y0.sum()
    return z


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    inner(x, y)
    o1 = torch.sin(y)
    o2 = inner(x, o1)
    o3 = inner(x, y)
    o4 = o3 * o3
    return o2 * o4


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(10, 10, generator=_g).requires_grad_(),
    torch.rand(10, 20, generator=_g).requires_grad_(),
)
