"""Which torch the reference mirrors: the installed one, and where versions differ (spec chapter
00, "Versions").

fxoracle mirrors torch 2.13.0, 2.14.1 and 2.15.0. The deduplication pass, the region tracker's
algorithm and `split_module` are the same in all three (byte-identical 2.13.0 -> 2.14.1; 2.15.0
changes only what is listed here). Every difference the reference or the checker must follow is
one field of `Behaviour`, read once from `torch.__version__`:

- `tf32_key` (TRK-2): what the tracker's key holds for TF32 matmuls. Up to 2.14 torch reads
  `torch._C._get_cublas_allow_tf32()` (a bool; it raises once the new
  `torch.backends.cuda.matmul.fp32_precision` API was used); from 2.15 the string
  `torch._C._get_fp32_precision_getter("cuda", "matmul")` (`'none'`, `'ieee'`, `'tf32'`).
- `hop_runs_body_eagerly` (CHK-17): from 2.14, eager `invoke_subgraph` without a fake mode runs
  its body with plain autograd; 2.13 goes through `InvokeSubgraphAutogradOp`, which marks outputs
  non-differentiable from the body's metadata (and cannot run backward on real tensors).
- `linear_sort` (SRT-1): 2.15's `_stable_topological_sort` resumes its scans (linear time); the
  order is the same as 2.13's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import torch

Tf32Key = Literal["allow_tf32", "fp32_precision"]
MIRRORED = ("2.13.0", "2.14.1", "2.15.0")  # the releases fxoracle is tested against


@dataclass(frozen=True, slots=True)
class Behaviour:
    """The installed torch's version and the behaviours that differ between releases."""

    version: str
    tf32_key: Tf32Key
    hop_runs_body_eagerly: bool
    linear_sort: bool

    @property
    def label(self) -> str:
        """`torch 2.13.0`: how reports name the torch they judged."""
        return f"torch {self.version}"


def release(version: str) -> tuple[int, int, int]:
    """`2.14.1+cu130` -> (2, 14, 1); a pre-release keeps its numbers (`2.15.0a0` -> 2.15.0)."""
    numbers = [int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3]]
    major, minor, patch = (*numbers, 0, 0, 0)[:3]
    return major, minor, patch


def behaviour_of(version: str) -> Behaviour:
    """What torch `version` does where releases differ."""
    found = release(version)
    plain = ".".join(str(n) for n in found)
    return Behaviour(
        version=plain,
        tf32_key="fp32_precision" if found >= (2, 15, 0) else "allow_tf32",
        hop_runs_body_eagerly=found >= (2, 14, 0),
        linear_sort=found >= (2, 15, 0),
    )


TORCH = behaviour_of(torch.__version__)
