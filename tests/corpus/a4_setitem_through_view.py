"""Repeated blocks read a value; between them an element is set through a view of it
(`v[0] = 3`, setitem on the view). The write's direct users are the view's, not the value's."""

from __future__ import annotations

import torch

scenario = "A4"
description = "blk reads h twice; v = h.view(-1); v[0] = 3 between the reads"
torch_wrong: str | None = "N9"
tracking_only = False


def blk(h: torch.Tensor) -> torch.Tensor:
    return (h * h).cos() + h


def model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.clone()
    v = h.view(-1)
    o1 = blk(h)
    v[0] = 3.0
    o2 = blk(h)
    v[1] = -3.0
    return o1, o2


example_inputs = (torch.randn(3, 4, generator=torch.Generator().manual_seed(3)),)
