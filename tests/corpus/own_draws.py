"""Own: random draws. A block drops out in train mode and adds `rand_like` noise, called three
times; between the calls the model draws with `randn`, `bernoulli` and `normal`, and writes one
of the draws in place through a view. Every draw reads and writes the generator (EFF-4):
swapping two gives other numbers. torch's pass orders no draw (N12): after outlining the
blocks, its sort moves `bernoulli` before the first call's draws."""

from __future__ import annotations

import torch

scenario = "own"
description = "dropout + rand_like block x3, randn/bernoulli/normal between, one written in place"
torch_wrong: str | None = "N12"
tracking_only = False


def block(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    t = torch.nn.functional.dropout(h @ w, 0.25, training=True)
    return t + torch.rand_like(t) * 0.1


def model(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    noise = torch.randn(4, 8, device=x.device)  # on x's: `--device cuda` moves it too (FIL-8)
    noise.view(-1).mul_(0.5)
    outs = [block(x, w)]
    mask = torch.bernoulli(torch.full_like(x, 0.5))
    outs.append(block(x * mask, w))
    outs.append(block(x + noise, w))
    return (*outs, torch.normal(x, 0.5))


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(4, 8, generator=_g), torch.randn(8, 8, generator=_g) * 0.3)
