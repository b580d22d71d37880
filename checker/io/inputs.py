"""Input makers: values to run a graph on, built from its placeholders' metadata (spec chapter
06, CHK-6).

`random_like(meta, shape, generator)` is the one maker of a random tensor: seeded, contiguous,
with the metadata's dtype, device and `requires_grad`; floats are normal, integers small and
non-negative (safe as indices), bools fair. `inputs_from_metadata(gm)` gives one input per
placeholder at the recorded shapes (symbolic sizes at their hints).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx

from checker.io.bounds import MAX_ELEMENTS
from reference.errors import FxOracleError
from reference.fx_helpers import example_value

SEED = 0  # inputs built from metadata are random, but the same on every load


def random_like(
    meta: torch.Tensor,
    shape: Sequence[int],
    generator: torch.Generator,
    device: torch.device | str | None = None,
) -> Any:
    """A seeded random contiguous tensor of `shape` with `meta`'s dtype, requires_grad and
    device (or `device`): normal floats, bools, small non-negative integers (safe as
    indices)."""
    elements = math.prod(shape)
    if elements > MAX_ELEMENTS:  # FIL-12: a declared 2^40 x 8 is refused, not allocated
        raise FxOracleError(f"an input of shape {list(shape)}: {elements} elements (at most "
                            f"{MAX_ELEMENTS})")  # fmt: skip
    where = meta.device if device is None else device
    if meta.dtype.is_floating_point or meta.dtype.is_complex:
        made = torch.randn(list(shape), dtype=meta.dtype, generator=generator)
        return made.to(where).requires_grad_(bool(meta.requires_grad))
    if meta.dtype == torch.bool:
        return torch.randint(0, 2, list(shape), generator=generator).bool().to(where)
    made = torch.randint(0, 4, list(shape), generator=generator)
    return made.to(meta.dtype).to(where)


def inputs_from_metadata(gm: torch.fx.GraphModule) -> tuple[Any, ...]:
    """One input per placeholder from its `val`: seeded random contiguous tensors of the
    recorded shape (symbolic sizes at their hints), dtype and device; scalars as recorded.
    """
    generator = torch.Generator().manual_seed(SEED)
    found = []
    for node in gm.graph.find_nodes(op="placeholder"):
        found.append(_input_like(node.name, example_value(node), generator))
    return tuple(found)


def _input_like(name: str, val: Any, generator: torch.Generator) -> Any:
    if isinstance(val, torch.SymInt):
        return _hint(name, val)
    if isinstance(val, bool | int | float):
        return val
    if not isinstance(val, torch.Tensor):
        raise FxOracleError(f"input `{name}` has no example value to build an input from")
    return random_like(val, [_hint(name, s) for s in val.shape], generator)


def _hint(name: str, size: int | torch.SymInt) -> int:
    if isinstance(size, int):
        return size
    hint = size.node.hint
    if not isinstance(hint, int):
        raise FxOracleError(f"input `{name}` has a size without a hint ({size}): pass inputs")
    return hint


def is_dynamic(gm: torch.fx.GraphModule) -> bool:
    """Whether a placeholder's metadata holds a symbolic size (or is a symbolic scalar)."""
    for node in gm.graph.find_nodes(op="placeholder"):
        val = example_value(node)
        if isinstance(val, torch.SymInt):
            return True
        if isinstance(val, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in val.shape):
            return True
    return False
