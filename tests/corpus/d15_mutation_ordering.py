"""D15 `test_mutation_ordering`: in-place updates of graph inputs between two calls must stay
ordered with the invokes (extra mutation dependencies)."""

from __future__ import annotations

import torch

scenario = "D15"
description = "views, x.add_(x), m(x, y), y.mul_(y), m(x, y): 1 subgraph, 2 calls, order kept"
torch_wrong: str | None = None
tracking_only = False


def views(x: torch.Tensor) -> torch.Tensor:
    return x.view(x.size()).view(x.size())


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x * 2).sum() + (y * 2).sum()


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    o0 = views(x)
    o1 = views(x)
    x.add_(x)
    o2 = inner(x, y)
    y.mul_(y)
    o3 = inner(x, y)
    return o0, o1, o2, o3


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
