"""T2 `test_get_regions_multiple_region_groups`: two helpers give two groups; `inner2` mutates
its inputs in place (`a += 2`), which region finding ignores."""

from __future__ import annotations

import torch

scenario = "T2"
description = "inner x3 and mutating inner2 x2: two groups, inner's listed first"
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
    o0 = inner(x, y)
    o1 = torch.sin(o0)
    o2 = inner(x, y0)
    o2 = inner2(x0, y0)
    o3 = inner(x, y)
    return o1 * o2 + o3


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
