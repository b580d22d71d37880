"""Own: autocast is not in the key, and `sin` and `mul` keep fp32 under CPU autocast, so a block
of them merges across the autocast boundary. The invoke still runs inside the autocast span."""

from __future__ import annotations

import torch

scenario = "own"
description = "sin(h) * 3 then exp, before and inside autocast(bf16): merge across the boundary"
torch_wrong: str | None = None
tracking_only = False


def block(h: torch.Tensor) -> torch.Tensor:
    return torch.exp(torch.sin(h) * 3)


def model(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    a = block(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        b = block(x) @ w
    return a, b


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(4, 8, generator=_g), torch.randn(8, 8, generator=_g))
