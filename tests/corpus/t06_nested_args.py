"""T6 `test_nested_args`: a foreach op takes lists of tensors; the flattened lists are keyed
leaf by leaf, so four fp32 calls merge and the bf16 call does not."""

from __future__ import annotations

import torch

scenario = "T6"
description = "_foreach_add over lists, four fp32 calls and one bf16 call: 4 regions of 5"
torch_wrong: str | None = None
tracking_only = False


def inner(xs: list[torch.Tensor], ys: list[torch.Tensor]) -> torch.Tensor:
    out = torch._foreach_add(xs, ys)
    return out[0] + out[1].sum()


def model(
    x: torch.Tensor, y: torch.Tensor, x2: torch.Tensor, y2: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    o0 = inner([x, y], [x, y])
    o1 = torch.sin(o0)
    o2 = inner([x, y], [x, y])
    o3 = torch.cos(o2)
    o4 = inner([x, y], [x, y])
    o5 = inner([x, y], [x, y])
    o6 = inner([x2, y2], [x2, y2])
    return o1, o3, o4, o5, o6


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.rand(10, 10, generator=_g),
    torch.rand(10, 20, generator=_g),
    torch.rand(10, 10, generator=_g).to(torch.bfloat16),
    torch.rand(10, 20, generator=_g).to(torch.bfloat16),
)
