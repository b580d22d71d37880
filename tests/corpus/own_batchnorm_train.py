"""Own: four residual blocks `x + relu(BatchNorm1d(Linear(x)))` in train mode. BatchNorm
updates its running statistics in place without bumping their version counters, and its graph
target `F.batch_norm` has no schema: only running it shows the write (EFF-9). The reference
refuses every region (RPL-7); torch outlines them (N14), and AOTAutograd then rejects the
subgraph's buffer mutation."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "x + relu(BatchNorm1d(Linear(x))) x4 in train mode: running stats written (N14)"
torch_wrong: str | None = "N14"
tracking_only = False


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.BatchNorm1d(width)

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
    model = Stack(width=8, depth=4).train()
    example_inputs = (torch.randn(6, 8),)
