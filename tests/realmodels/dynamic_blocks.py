"""Dynamic shapes (dynamic = True): 4 pre-norm attention+MLP blocks (hidden 32, 4 heads) that
read x.shape[0] and x.shape[1] to reshape for attention, so every block's view/reshape takes
symbolic sizes (s0, s1)."""

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t = x.shape[0], x.shape[1]
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, -1))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


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
dynamic = True
