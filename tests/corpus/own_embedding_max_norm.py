"""Own: three blocks `h + tanh(Embedding(ids, max_norm=1.0) * h)`: an embedding with `max_norm`
renormalises the rows it looks up in place (`embedding_renorm_`, under no_grad). The reference
refuses the regions that would write a weight (RPL-7)."""

from __future__ import annotations

import torch
from torch import nn

scenario = "own"
description = "h + tanh(Embedding(ids, max_norm=1) * h) x3: the weight is renormalised in place"
torch_wrong: str | None = None
tracking_only = False


class Block(nn.Module):
    def __init__(self, vocab: int, width: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width, max_norm=1.0)

    def forward(self, h: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        return h + torch.tanh(self.embed(ids) * h)


class Stack(nn.Module):
    def __init__(self, vocab: int, width: int, depth: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(vocab, width) for _ in range(depth))

    def forward(self, h: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            h = block(h, ids)
        return h


with torch.random.fork_rng(devices=[]):
    torch.manual_seed(0)
    model = Stack(vocab=10, width=4, depth=3)
    example_inputs = (torch.randn(5, 4), torch.tensor([1, 3, 3, 7, 9]))
