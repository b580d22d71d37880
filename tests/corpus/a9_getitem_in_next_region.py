"""A getitem of a tuple that region 0 outputs lies in region 1 of the same group (DiT, 3+ layers).
The loop body is `h + b` (b: the *previous* iteration's chunk), a new chunk, `h * a`; torch's
regions are the loop bodies, so region 0 holds `chunk_1` and region 1 holds `b_1 = chunk_1[1]`.
Replacing region 0 re-points and erases `b_1`; region 1's call then takes the erased `b_1` as
an operand (a flattened tuple input) and torch's sort fails. The reference's call for region 1
passes the getitem that took over from `b_1` (RPL-17)."""

from __future__ import annotations

import torch

scenario = "A9"
description = (
    "h + b; a, b = halves(t); h * a in a loop: region 1 holds a getitem of region 0's chunk"
)
torch_wrong: str | None = "N11"
tracking_only = False


def halves(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (t * 2).chunk(2, dim=-1)


def model(x: torch.Tensor, t0: torch.Tensor, t1: torch.Tensor, t2: torch.Tensor) -> torch.Tensor:
    a, b = halves(t0)
    h = x * a
    for t in (t1, t2):
        h = h + b
        a, b = halves(t)
        h = h * a
    return h + b


_g = torch.Generator().manual_seed(9)
example_inputs = (
    torch.randn(2, 4, generator=_g),
    *(torch.randn(2, 8, generator=_g) for _ in range(3)),
)
