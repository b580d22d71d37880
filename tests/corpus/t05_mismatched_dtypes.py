"""T5 `test_mismatched_dtypes`: four fp32 calls merge; the bf16 call has other input metadata
and stays out."""

from __future__ import annotations

import torch

scenario = "T5"
description = "j(x, y) four times in fp32, once in bf16: one group of 4 regions of 4"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x1 = x * 1
    y1 = y + 1
    return x1 + y1.sum()


def model(
    x: torch.Tensor, y: torch.Tensor, x2: torch.Tensor, y2: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    o0 = inner(x, y)
    o1 = torch.sin(o0)
    o2 = inner(x, y)
    o3 = torch.cos(o2)
    o4 = inner(x, y)
    o5 = inner(x, y)
    o6 = inner(x2, y2)
    return o1, o3, o4, o5, o6


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(10, 10, generator=_g),
    torch.rand(10, 20, generator=_g),
    torch.rand(10, 10, generator=_g).to(torch.bfloat16),
    torch.rand(10, 20, generator=_g).to(torch.bfloat16),
)
