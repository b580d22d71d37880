"""Own: three blocks `x + relu(InstanceNorm1d(Linear(x)))` with `track_running_stats=True`
in train mode: `instance_norm` copies the running statistics back in place (a version counter
moves, and running it shows the write too, EFF-9). Both the reference (RPL-7) and torch refuse
the regions."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "x + relu(InstanceNorm1d(Linear(x))) x3, track_running_stats: refused by both"
torch_wrong: str | None = None
tracking_only = False


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.InstanceNorm1d(width, track_running_stats=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.relu(self.norm(self.linear(x)))


class Stack(nn.Module):
    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    model = Stack(width=8, depth=3).train()
    example_inputs = (torch.randn(2, 8, 8),)
