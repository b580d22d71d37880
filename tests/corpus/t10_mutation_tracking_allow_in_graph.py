"""T10 `test_mutation_tracking_allow_in_graph`: an opaque `allow_in_graph` call that mutates its
first argument is caught by the version counters."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import torch

scenario = "T10"
description = "allow_in_graph f mutates x: mutation map {o0: [0], sin_: [0]}"
torch_wrong: str | None = None
tracking_only = True


def opaque(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(y)
    return x.sum() + y.sum()


# allow_in_graph is untyped; it registers the function in place and returns it.
cast(Callable[[object], object], torch._dynamo.allow_in_graph)(opaque)


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = x + y
    o0 = opaque(z, y)
    z.sin_()
    return z + o0


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 10, generator=_g))
