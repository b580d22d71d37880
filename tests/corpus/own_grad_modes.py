"""Own: grad mode is in the key. Two calls with grad and two under `no_grad` form two groups.
`_set_grad_enabled` is not pinned by torch's extra dependencies, so the invokes of the no_grad
group may move out of the no_grad span (compare `requires_grad` of the outputs)."""

from __future__ import annotations

import torch

scenario = "own"
description = "tanh(h @ w) + h twice with grad, twice under no_grad: two groups"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.tanh(h @ w) + h


def model(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for grad in (True, False, True, False):
        with torch.set_grad_enabled(grad):
            outs.append(block(x, w))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randn(4, 8, generator=_g),
    (torch.randn(8, 8, generator=_g) * 0.3).requires_grad_(),
)
