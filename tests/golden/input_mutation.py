"""Golden: each call mutates its inputs in place; regions that mutate an input are refused
(RPL-7), the pure reductions after them are replaced."""

import torch


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.add_(x + 1)
    y.add_(y + 1)
    return x.sum() + y.sum()


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = torch.sin(x)
    return inner(x0, y) + inner(x0.clone(), y.clone())


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 20, generator=_g))
