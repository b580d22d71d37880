"""Own: a single-head attention block (q/k/v projections, softmax, matmul, residual) repeated
three times from one loop."""

from __future__ import annotations

import torch

scenario = "own"
description = "attention(h, wq, wk, wv) three times in a loop: one group of 3 regions"
torch_wrong: str | None = None
tracking_only = False


def attention(
    h: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor
) -> torch.Tensor:
    q = h @ wq
    k = h @ wk
    v = h @ wv
    scores = torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1)
    return h + scores @ v


def model(x: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(3):
        h = attention(h, wq, wk, wv)
    return h


_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randn(2, 6, 16, generator=_g),
    torch.randn(16, 16, generator=_g) * 0.2,
    torch.randn(16, 16, generator=_g) * 0.2,
    torch.randn(16, 16, generator=_g) * 0.2,
)
