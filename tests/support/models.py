"""Small modules and graph builders shared by several test files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.fx


class Block(torch.nn.Module):
    """relu(linear(x)) + x."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x)) + x


class Stack(torch.nn.Module):
    """`depth` identical blocks in a loop (one call site per op), then one more op."""

    def __init__(self, depth: int = 3) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x.sin()


def call(
    g: torch.fx.Graph, name: str, target: Callable[..., Any] | str, *args: Any
) -> torch.fx.Node:
    """A call_method (string target) or call_function node with a chosen name."""
    op = "call_method" if isinstance(target, str) else "call_function"
    return g.create_node(op, target, args, name=name)


def njt_block(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (h * w).sin() + h


def njt_blocks(values: torch.Tensor, offsets: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    nt = torch.nested.nested_tensor_from_jagged(values, offsets)
    return njt_block(njt_block(nt, w), w).values()


def njt_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(9, 4, generator=g), torch.tensor([0, 2, 5, 9]), torch.randn(4, generator=g)


MARKED_MODEL = """import pathlib
import torch
pathlib.Path({marker!r}).write_text("loaded")


def model(x):
    for _ in range(2):
        x = torch.sin(x) + 1
    return x


example_inputs = (torch.ones(3),)
"""


def marked_model(folder: Path, name: str) -> tuple[Path, Path]:
    """A model file in `folder` that writes a marker file when imported (the run's first step:
    a marker means the work had begun), and the marker's path."""
    marker = folder / "loaded"
    path = folder / name
    path.write_text(MARKED_MODEL.format(marker=str(marker)))
    return path, marker
