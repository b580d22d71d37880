"""Own (fake CUDA): the device is in the key (tensor metadata), so the block on a fake `cuda`
tensor does not merge with the two calls on `cpu` tensors (which do)."""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

scenario = "own"
description = "fake tensors: sin(h) * 2 + 1 on cpu, cuda, cpu: the cpu calls merge"
torch_wrong: str | None = None
tracking_only = False
device = "cuda"


def block(h: torch.Tensor) -> torch.Tensor:
    return torch.sin(h) * 2 + 1


def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for h in (x, y, x):
        outs.append(block(h))
    return tuple(outs)


with FakeTensorMode():
    example_inputs = (torch.randn(4, 8), torch.randn(4, 8, device="cuda"))
