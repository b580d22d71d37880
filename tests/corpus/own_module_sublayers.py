"""Own: an nn.Module with four identical sublayers (Linear, LayerNorm, GELU, residual); each
layer's parameters are distinct graph inputs, the layer code is one call site."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "nn.ModuleList of 4 identical Linear+LayerNorm+GELU residual layers"
torch_wrong: str | None = None
tracking_only = False


class Layer(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + nn.functional.gelu(self.norm(self.linear(h)))


class Stack(nn.Module):
    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer(width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    model = Stack(width=16, depth=4)
    example_inputs = (torch.randn(4, 16),)
