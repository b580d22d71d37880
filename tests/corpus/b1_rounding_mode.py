"""B1 (string constant): `rounding_mode="floor"` and `"trunc"` share a key (strings become None);
the trunc call floors after deduplication."""

from __future__ import annotations

import torch

scenario = "B1"
description = "div(x * 10, 3, rounding_mode=m) + 1 for m in (floor, trunc): wrong with dedup"
torch_wrong: str | None = "B1"
tracking_only = False


def block(x: torch.Tensor, mode: str) -> torch.Tensor:
    return torch.div(x * 10, 3, rounding_mode=mode) + 1


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for mode in ("floor", "trunc"):
        outs.append(block(x, mode))
    return tuple(outs)


example_inputs = (torch.rand(8, 8, generator=torch.Generator().manual_seed(0)) - 0.5,)
