"""Small modules shared by several test files."""

from __future__ import annotations

import torch


class Block(torch.nn.Module):
    """relu(linear(x)) + x."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x)) + x


class Stack(torch.nn.Module):
    """`depth` identical blocks in a loop (one call site per op), then one more op."""

    def __init__(self, depth: int = 3) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x.sin()
