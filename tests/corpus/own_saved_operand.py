"""Own: blocks read a view of a buffer-like input that is updated in place after each block,
while a weight requires grad (a training step). torch's `invoke_subgraph` saves every tensor
operand of a call for backward; the later `x.add_(1)` bumps the view's version counter, so
backward fails on the deduplicated graph. The eager ops saved only what they need (the weight's
gradient needs `sin(v)`, not `v`). N16."""

from __future__ import annotations

import torch

scenario = "own"
description = "h = cos(sin(x) * w); x.add_(1), three times, w requiring grad"
torch_wrong: str | None = "N16"
tracking_only = False


def block(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.cos(torch.sin(x) * w)


def model(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = block(x, w)
    x.add_(1)
    h = h + block(x, w)
    x.add_(1)
    h = h + block(x, w)
    x.add_(1)
    return h


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randn(4, 8, generator=_g),
    torch.randn(4, 8, generator=_g).requires_grad_(),
)
