"""Own: the same kwargs in two orders from one call site; torch sorts kwargs in its key, so the
two calls merge (correctly: the values are the same)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import torch

scenario = "own"
description = "sum(sin(h), **kw) with {dim, keepdim} and {keepdim, dim}: merge, result correct"
torch_wrong: str | None = None
tracking_only = False

# torch.sum's typed overloads reject **dict[str, int | bool]; Dynamo sees torch.sum.
sum_any = cast(Callable[..., torch.Tensor], torch.sum)

KWARGS: tuple[dict[str, int | bool], ...] = (
    {"dim": 1, "keepdim": True},
    {"keepdim": True, "dim": 1},
)


def block(h: torch.Tensor, kwargs: dict[str, int | bool]) -> torch.Tensor:
    return sum_any(torch.sin(h), **kwargs).cos()


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for kwargs in KWARGS:
        outs.append(block(x, kwargs))
    return tuple(outs)


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
