"""Own: three blocks `x + relu(GroupNorm(Conv2d(x)))` in train mode. GroupNorm keeps no running
statistics: running it shows no write (EFF-9), so the blocks deduplicate, as in torch."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "x + relu(GroupNorm(Conv2d(x))) x3 in train mode: no write, blocks 2-3 become 2 calls"
torch_wrong: str | None = None
tracking_only = False


class Block(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.GroupNorm(2, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.relu(self.norm(self.conv(x)))


class Stack(nn.Module):
    def __init__(self, channels: int, depth: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(channels) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    model = Stack(channels=4, depth=3).train()
    example_inputs = (torch.randn(2, 4, 5, 5),)
