"""Own: four blocks that read `b, t, c = x.shape` under dynamic shapes; `c` is static, so in
blocks 2-4 Dynamo leaves `getitem(size, 2)` unused. That dead getitem is no reason for the
region to return the `Size` (RPL-27): the three regions deduplicate and are proved. torch's pass
on the same capture returns the dead int from its subgraph (N5: a subgraph returning a plain
int), and its eager runtime raises `'int' object has no attribute 'requires_grad'` when that
graph runs (the oracle blames torch); end to end, Dynamo's clean-up drops the dead getitems
before the pass and `torch.compile` gives eager's result."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "b, t, c = x.shape in 4 blocks, dynamic: the dead getitem is no output (RPL-27)"
torch_wrong: str | None = "N5"
tracking_only = False


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        h = self.lin(x).view(b, t, 2, c // 2).transpose(1, 2)
        return x + h.transpose(1, 2).reshape(b, t, c).relu()


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    model = Stack()
    example_inputs = (torch.randn(2, 5, 8),)
dynamic = True
