"""Own: an optimizer-style step over three parameter groups, each `_foreach_mul_(ps, 0.9)`
then `_foreach_add_(ps, gs, alpha=-0.1)` and the sum of the result: the `_foreach_*_` ops write
their list arguments (schema `Tensor(a!)[]`), so the regions holding them are refused (RPL-7).
torch's pass crashes on the region whose output is the list `_foreach_mul_` returns (N15)."""

from __future__ import annotations

import torch

scenario = "own"
description = "_foreach_mul_/_foreach_add_ on three parameter groups: the updates are refused"
torch_wrong: str | None = "N15"
tracking_only = False


def step(params: list[torch.Tensor], grads: list[torch.Tensor]) -> torch.Tensor:
    torch._foreach_mul_(params, 0.9)
    torch._foreach_add_(params, grads, alpha=-0.1)
    return params[0].sum() + params[1].sum()


def model(*tensors: torch.Tensor) -> torch.Tensor:
    total = tensors[0].new_zeros(())
    for k in range(3):
        params, grads = list(tensors[4 * k : 4 * k + 2]), list(tensors[4 * k + 2 : 4 * k + 4])
        total = total + step(params, grads)
    return total


_g = torch.Generator().manual_seed(0)
example_inputs = tuple(torch.rand(3, 4, generator=_g) for _ in range(12))
