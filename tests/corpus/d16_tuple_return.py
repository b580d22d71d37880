"""D16 `test_tuple_return`: an `allow_in_graph` function returning a tuple inside the region; its
outputs are flattened into two subgraph outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import torch

scenario = "D16"
description = "allow_in_graph tr(x, y) = (x, y) on x+x+1, y+y+1, three times"
torch_wrong: str | None = None
tracking_only = False


def pair(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x, y


# allow_in_graph is untyped; it registers the function in place and returns it.
cast(Callable[[object], object], torch._dynamo.allow_in_graph)(pair)


def inner(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return pair(x + x + 1, y + y + 1)


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    o0 = inner(x, y)
    o1 = inner(x, y)
    o2 = inner(x, y)
    return o0 + o1 + o2


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
