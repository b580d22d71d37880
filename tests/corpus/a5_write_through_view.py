"""Repeated blocks read a value; after each, it is updated in place through a view of it
(`h.view(-1).mul_(2)`): the base changes, and the write's only direct user is the view."""

from __future__ import annotations

import torch

scenario = "A5"
description = "blk reads h twice; h.view(-1).mul_(2) after each read"
torch_wrong: str | None = "N9"
tracking_only = False


def blk(h: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(h * 4) + h


def model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.clone()
    o1 = blk(h)
    h.view(-1).mul_(2)
    o2 = blk(h)
    h.view(-1).mul_(2)
    return o1, o2


example_inputs = (torch.randn(4, 3, generator=torch.Generator().manual_seed(4)),)
