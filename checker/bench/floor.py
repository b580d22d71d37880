"""`make bench`: how far keying is from the one-pass limit (spec chapter 01, TRK-13).

Two passes over a graph's nodes, timed like keying: a bare pass (read each node's op), and a
pass that reads, for each node's fake-tensor value, exactly the metadata a key needs (dtype,
sizes, strides, device, requires_grad, the negative and inference flags), with subclass
`__torch_function__` off as keying has it, and builds nothing from it. No keying can do less
than the second pass; the bench prints keying's time as a multiple of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from checker.bench.blocks import BlockGraph


@dataclass(frozen=True, slots=True)
class Floor:
    """CPU seconds of one bare pass and of one pass reading every value's metadata."""

    nodes: int
    pass_s: float
    reads_s: float


def bare_pass(graph: torch.fx.Graph) -> None:
    for node in graph.nodes:
        _ = node.op


def metadata_reads(graph: torch.fx.Graph) -> None:
    with torch._C.DisableTorchFunctionSubclass():
        for node in graph.nodes:
            value = node.meta.get("example_value")
            if isinstance(value, torch.Tensor):
                _read(value)


def _read(t: Any) -> tuple[object, ...]:
    return (t.dtype, t.shape, t.stride(), t.device, t.requires_grad, t.is_neg(),
            t.is_inference())  # fmt: skip


def line(floor: Floor, key_s: float) -> str:
    """The limit and keying's distance from it, as one line of the report."""
    return (f"one pass over {floor.nodes} nodes: {floor.pass_s:.4f} s; reading each value's "
            f"metadata once: {floor.reads_s:.4f} s; keying: {key_s:.4f} s "
            f"({key_s / floor.reads_s:.1f}x the reads)")  # fmt: skip


def measure(bg: BlockGraph, timed: Callable[[Callable[[], object]], float]) -> Floor:
    """Both passes on `bg`, each timed by `timed(call)` (the bench's best-of-N)."""
    pass_s = timed(lambda: bare_pass(bg.graph))
    reads_s = timed(lambda: metadata_reads(bg.graph))
    return Floor(bg.n_nodes, pass_s, reads_s)
