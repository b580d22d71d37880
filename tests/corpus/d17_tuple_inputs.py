"""D17 `test_tuple_inputs` (tracking only): `split` in a helper called four times. Upstream removes
`split` from the tracker before dedup (test-level surgery, not done here), which yields
region [x0, x1, add, o1] with flattened tuple placeholders; without it: [split, x0, x1, add, o1]."""

from __future__ import annotations

import torch

scenario = "D17"
description = "a, b = split(x, 5); a + b + y four times: 4 regions of 5"
torch_wrong: str | None = None
tracking_only = True


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0, x1 = torch.split(x, 5)
    return x0 + x1 + y


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    o1 = inner(x, y)
    o2 = inner(x, o1)
    o3 = inner(x, o2)
    o4 = inner(x, o3)
    return o4


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(5, 10, generator=_g))
