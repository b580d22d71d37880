"""D3 `test_multiple_subgraphs`: two helpers, two subgraphs; the first inner2 call is unused."""

from __future__ import annotations

import torch

scenario = "D3"
description = "inner x3 and inner2 x2: subgraph_0 = inner (3 calls), subgraph_1 = inner2 (2)"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x1 = x + 1
    y1 = y + 2
    z = x1.sum() + y1.sum()
    return z


def inner2(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a0 = a + 2
    b0 = b + 3
    c = a0 * b0.cos().sum()
    return c


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = torch.cos(x)
    y0 = torch.sin(y)
    inner2(x0, y0)
    o1 = torch.sin(inner(x, y))
    o2 = inner(x, y0)
    o3 = inner2(x0, y0)
    o4 = inner(x, y)
    return o1 * o2 * o3 + o4


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(10, 10, generator=_g).requires_grad_(),
    torch.rand(10, 20, generator=_g).requires_grad_(),
)
