"""Own: four ResNet-style basic blocks `relu(x + bn2(conv2(relu(bn1(conv1(x))))))` in train
mode: each BatchNorm2d writes its running statistics (EFF-9). The reference refuses every
region (RPL-7); torch outlines them (N14)."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "ResNet basic block with two BatchNorm2d x4 in train mode: refused (N14)"
torch_wrong: str | None = "N14"
tracking_only = False


class BasicBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(h)))


class ResNet(nn.Module):
    def __init__(self, channels: int, depth: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(BasicBlock(channels) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    model = ResNet(channels=4, depth=4).train()
    example_inputs = (torch.randn(2, 4, 6, 6),)
