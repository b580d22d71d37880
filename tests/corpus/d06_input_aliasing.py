"""D6 `test_input_aliasing`: a region whose output aliases its input (views) is refused; the
non-aliasing helper is deduplicated."""

from __future__ import annotations

import torch

scenario = "D6"
description = "view chain x2 (aliasing, refused) and m(x, y) x2 (1 subgraph, 2 calls)"
torch_wrong: str | None = None
tracking_only = False


def views(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.view(x.size()).view(x.size())


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x * 2).sum() + (y * 2).sum()


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    o0 = views(x, y)
    o1 = views(x, y)
    o2 = inner(x, y)
    o3 = inner(x, y)
    return o0, o1, o2, o3


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
