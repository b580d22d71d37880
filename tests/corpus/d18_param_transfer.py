"""D18 `test_param_transfer_to_submodule`: inputs marked as static addresses (as parameters
are); with the eager backend one subgraph is called three times."""

from __future__ import annotations

import torch

scenario = "D18"
description = "x + y + y + x three times on mark_static_address inputs: 1 subgraph, 3 calls"
torch_wrong: str | None = None
tracking_only = False


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x + y + y + x


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    o = x
    for _ in range(3):
        o = inner(o, y)
    return o


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.rand(10, 10, generator=_g), torch.rand(10, 10, generator=_g))
for _t in example_inputs:
    torch._dynamo.mark_static_address(_t)
