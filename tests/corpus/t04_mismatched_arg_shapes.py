"""T4 `test_mismatched_arg_shapes`: as T2, but one `inner` call gets a 10x10 `y` and the second
`inner2` a scalar `a`; positions that differ in any region drop out of every region."""

from __future__ import annotations

import torch

scenario = "T4"
description = "T2 with mismatched shapes: three smaller groups"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x1 = x + 1
    y1 = y + 2
    z = x1.sum() + y1.sum()
    return z


def inner2(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a += 2
    b += 3
    c = a * b.cos().sum()
    return c


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = torch.cos(x)
    y0 = torch.sin(y)
    o1 = inner2(x0, y0)
    o0 = inner(x, o1)
    o1 = torch.sin(o0)
    o2 = inner(x, y0)
    o2 = inner2(o2, y0)
    o3 = inner(x, y)
    return o1 * o2 + o3


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
