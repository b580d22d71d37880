"""B4: roots are never marked claimed, so a later group can take nodes an earlier group already
replaced: overlapping groups, "already erased" warnings, redundant compute (result correct).

`exp`, `sin` and `+` come from helpers (one key each); the two `neg` calls are on two lines
(two keys), so the `+` group stops at [sin, add] and the `sin` group then claims [exp, sin]."""

from __future__ import annotations

import torch

scenario = "B4"
description = "exp, sin x3; neg, add x2: overlapping groups [sin, add] x2 and [exp, sin] x3"
torch_wrong: str | None = "B4"
tracking_only = False


def f_exp(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x)


def f_sin(r: torch.Tensor) -> torch.Tensor:
    return torch.sin(r)


def f_add(g: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    return g + u


def model(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    r1 = f_exp(x)
    g1 = f_sin(r1)
    r2 = f_exp(x)
    u2 = torch.neg(r2)
    g2 = f_sin(r2)
    p2 = f_add(g2, u2)
    r3 = f_exp(x)
    u3 = torch.neg(r3)
    g3 = f_sin(r3)
    p3 = f_add(g3, u3)
    return g1, p2, p3


example_inputs = (torch.rand(8, 8, generator=torch.Generator().manual_seed(0)),)
