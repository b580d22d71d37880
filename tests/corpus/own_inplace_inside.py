"""Own: in-place statements (`t.add_(1)`, result unused) on a value created inside the block.
The in-place nodes have no users, so they stay outside the region [t, h], but `h = t * h` reads
`t` after them. torch computes `h` inside the subgraph *before* the in-place updates run:
wrong result with dedup. Not in the behaviour doc's bug table: provisional id B13. (D2 is fine
because `o += 1` rebinds `o` to the in-place node, which then is an argument of later nodes.)"""

from __future__ import annotations

import torch

scenario = "own"
description = "t = h * 3; t.add_(1); t.relu_(); t * h, three times: h computed before add_"
torch_wrong: str | None = "B13"
tracking_only = False


def block(h: torch.Tensor) -> torch.Tensor:
    t = h * 3
    t.add_(1)
    t.relu_()
    return t * h


def model(x: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(3):
        h = block(h)
    return h


example_inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)) * 0.5,)
