"""Own: four `nn.MultiheadAttention` blocks in a chain (hidden 16, 2 heads). Dynamo traces
`multi_head_attention_forward`, whose `chunk` of the packed projection is a tuple: a block's
region returns it whole and the next block's region begins with its getitems (RPL-17: the
getitems become operands taken from the earlier call)."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "x + MultiheadAttention(x, x, x) four times: each region reads its neighbour's chunk"
torch_wrong: str | None = None
tracking_only = False


class Net(nn.Module):
    def __init__(self, depth: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(nn.MultiheadAttention(16, 2, batch_first=True)
                                    for _ in range(depth))  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x, x, x)[0]
        return x


torch.manual_seed(0)
model = Net().eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(2, 5, 16, generator=_g),)
