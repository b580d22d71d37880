"""A block whose activation is a custom `torch.autograd.Function`: Dynamo captures it as
`autograd_function_apply(fwd_body_k, bwd_body_k, ...)`, one body pair per call. The reference
outlines the block with the representative's bodies as attributes of the subgraph (RPL-20);
torch's pass crashes (`KeyError: 'example_value'`)."""

from __future__ import annotations

import torch

scenario = "own"
description = "x + SiLU-like autograd.Function(linear(x)) three times: bodies travel as attributes"
torch_wrong: str | None = "N3"
tracking_only = False


class Act(torch.autograd.Function):
    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, g: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors  # type: ignore[attr-defined]
        s = torch.sigmoid(x)
        return g * (s + x * s * (1 - s))


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + Act.apply(self.lin(x))


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


with torch.random.fork_rng():
    torch.manual_seed(0)
    model = Model()
example_inputs = (torch.randn(2, 8, generator=torch.Generator().manual_seed(0)),)
