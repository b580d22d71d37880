"""T11 `test_non_tensor_arg_hashing`: ints inside nested tuples are part of the key, so the
stride-2 conv does not merge. Shapes shrunk from 32x256x56x56 (x) and 512x256x1x1 (w)."""

from __future__ import annotations

import torch

scenario = "T11"
description = "conv2d three times with stride 1, once with stride 2: 3 regions [y, conv]"
torch_wrong: str | None = None
tracking_only = False

Conv = tuple[tuple[int, int], tuple[int, int], tuple[int, int], int]


def inner(x: torch.Tensor, w: torch.Tensor, t: Conv) -> torch.Tensor:
    y = x + x
    return torch.conv2d(y, w, None, *t)


def model(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    t: Conv = ((1, 1), (0, 0), (1, 1), 1)
    o1 = inner(x, w, t)
    o2 = inner(x, w, t)
    o3 = inner(x, w, t)
    o4 = inner(x, w, ((2, 2), (0, 0), (1, 1), 1))
    return o1, o2, o3, o4


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(1, 4, 6, 6, generator=_g), torch.rand(8, 4, 1, 1, generator=_g))
