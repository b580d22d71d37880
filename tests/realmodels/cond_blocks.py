"""torch.cond inside 4 repeated residual MLP blocks (hidden 32): each block picks a GELU or a
tanh branch by the sign of its normalized input's mean, captured as a `cond` higher-order op with
get_attr branch subgraphs."""

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(2 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        y = torch.cond(
            h.mean() > 0,
            lambda t: self.down(F.gelu(self.up(t))),
            lambda t: self.down(torch.tanh(self.up(t))),
            (h,),
        )
        return x + y


class Net(nn.Module):
    def __init__(self, depth: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(depth))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor]:
        for block in self.blocks:
            x = block(x)
        return (x,)


torch.manual_seed(0)
model = Net().eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(2, 8, 32, generator=_g),)
