"""Own: three identical residual blocks with dropout, in train mode, with parameters that require
grad (issue 29): random draws inside the regions torch's pass outlines."""

from __future__ import annotations

import torch

scenario = "own"
description = "h = h + Dropout(0.5)(relu(Linear(h))), three blocks in train mode, weights with grad"
torch_wrong: str | None = "N4"  # torch's runtime draws the masks once more for metadata
# measured (tests/oracle/test_torch_side.py): 2.11.0 to 2.13.0 wrong, 2.14.1 and 2.15.0 right
torch_right_from = "2.14.1"
tracking_only = False


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.drop(torch.relu(self.lin(h)))


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    model = Model().train()
    example_inputs = (torch.randn(4, 16),)
