"""SRT-10 with autocast (fuzz model random_12_139, shrunk by hand): two `with autocast` blocks
one after the other call the same helper as the code outside them. torch's erasure loop
drops the erased region nodes' own dependency on `_enter_autocast`, so the call outlined from
the first block is sorted before the block: `h1` comes out float32 instead of bfloat16."""

from __future__ import annotations

import torch

scenario = "own"
description = "mm blocks inside and outside two back-to-back autocast blocks: wrong with dedup"
torch_wrong: str | None = "SRT-10"
tracking_only = False
dynamic = True


def block(h: torch.Tensor) -> torch.Tensor:
    return torch.mm(h.clone(), h.t()).sigmoid()


def model(x0: torch.Tensor, x1: torch.Tensor) -> tuple[torch.Tensor, ...]:
    h0 = block(x0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h1 = block(x1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h2 = block(h0)
    return h0, h1, h2, block(x1)


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(8, 8, generator=_g), torch.randn(8, 8, generator=_g))
