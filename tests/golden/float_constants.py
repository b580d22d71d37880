"""Golden: torch's key ignores float constants (B1), so torch merges the three calls and
computes a wrong result; the reference keys constants and finds no group."""

import torch


def block(x: torch.Tensor, s: float) -> torch.Tensor:
    return torch.cos(torch.sin(x) * s)


def model(x: torch.Tensor) -> torch.Tensor:
    return block(block(block(x, 0.5), 2.0), 3.0)


example_inputs = (torch.rand(8, 8, generator=torch.Generator().manual_seed(0)),)
