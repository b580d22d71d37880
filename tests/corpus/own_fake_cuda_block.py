"""Own (fake CUDA): a block on fake `cuda` tensors, three times from a loop. Built under
FakeTensorMode, so Dynamo captures it on a CPU-only torch; it cannot be run eagerly."""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

scenario = "own"
description = "fake CUDA: relu(h @ w) + h, three times in a loop: merged"
torch_wrong: str | None = None
tracking_only = False
device = "cuda"


def block(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(h @ w) + h


def model(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(3):
        h = block(h, w)
    return h


with FakeTensorMode():
    example_inputs = (torch.randn(4, 8, device="cuda"), torch.randn(8, 8, device="cuda"))
