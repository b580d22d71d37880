"""Own: four `nn.MultiheadAttention` blocks in a chain (hidden 16, 2 heads). Dynamo keeps each
`multi_head_attention_forward` as one call returning `(output, weights)`: a region ends with
that call and the next region begins with its getitem `[0]`. Replacing a region re-points the
getitem to its call; the next region passes that getitem as its operand (RPL-17). torch's pass
outlines the next region with the erased getitem and its sort fails (N11)."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "x = MultiheadAttention(x, x, x)[0] four times: each region begins with a getitem"
torch_wrong: str | None = "N11"
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
