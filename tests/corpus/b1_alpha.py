"""B1 (float kwarg): `add(..., alpha=.25)` and `alpha=4.` share a key; the second call uses
alpha=.25 after deduplication."""

from __future__ import annotations

import torch

scenario = "B1"
description = "add(sin(x), y, alpha=a).cos() for a in (.25, 4.): wrong result with dedup"
torch_wrong: str | None = "B1"
tracking_only = False


def block(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
    return torch.add(torch.sin(x), y, alpha=a).cos()


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for a in (0.25, 4.0):
        outs.append(block(x, y, a))
    return tuple(outs)


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(8, 8, generator=_g), torch.rand(8, 8, generator=_g) * 3)
