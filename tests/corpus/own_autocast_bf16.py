"""Own: autocast is not in the key. Calls before, inside and after `autocast(bfloat16)` on CPU:
inside, the matmul output is bf16, so only the two fp32 calls merge; the invokes keep their side
of the autocast enter/exit (pinned by extra dependencies)."""

from __future__ import annotations

import torch

scenario = "own"
description = "relu(h @ w).sum(-1) before, inside and after autocast(bf16): fp32 calls merge"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(h @ w).sum(dim=-1) * 2


def model(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    a = block(x, w)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = block(x, w)
    c = block(x, w)
    return a, b, c


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(4, 8, generator=_g), torch.randn(8, 8, generator=_g))
