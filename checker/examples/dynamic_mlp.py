"""A bundled dynamic-shape example: residual MLP blocks on a batch of symbolic size.

Captured with `dynamic = True`, so sizes are symbols (`s0`, ...) and the checker proves the
shapes at every call with z3 and runs the numbers at two batch sizes.
"""

import torch
from torch import nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(2 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.relu(self.up(self.norm(x))))


class Stack(nn.Module):
    def __init__(self, dim: int = 16, depth: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


model = Stack().eval()
example_inputs = (torch.randn(8, 16),)
dynamic = True
