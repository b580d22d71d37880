"""Which torch the reference mirrors: the installed one, and where versions differ (spec chapter
00, "Versions").

fxoracle mirrors torch 2.11 to 2.15 (tested on 2.11.0, 2.12.0, 2.13.0, 2.14.1 and 2.15.0); on
any other torch it stops at import with one line and exit 2 (`installed`), before any module
that reads torch's internals. The deduplication pass, the region tracker's algorithm and
`split_module` are the same from 2.13.0 to 2.14.1; 2.11 and 2.12 are one another's, and differ
from 2.13 where listed here and in the spec. Every difference the reference or the checker must
follow is one field of `Behaviour`, read once from `torch.__version__`:

- `tf32_key` (TRK-2): what the tracker's key holds for TF32 matmuls. Up to 2.14 torch reads
  `torch._C._get_cublas_allow_tf32()` (a bool; it raises once the new
  `torch.backends.cuda.matmul.fp32_precision` API was used); from 2.15 the string
  `torch._C._get_fp32_precision_getter("cuda", "matmul")` (`'none'`, `'ieee'`, `'tf32'`).
- `hop_runs_body_eagerly` (CHK-17): from 2.14, eager `invoke_subgraph` without a fake mode runs
  its body with plain autograd; 2.11 to 2.13 go through `InvokeSubgraphAutogradOp` (which cannot
  run backward on real tensors); 2.13's also marks outputs non-differentiable from the body's
  metadata (`hop_marks_from_body`), 2.11 and 2.12's do not.
- `linear_sort` (SRT-1): 2.15's `_stable_topological_sort` resumes its scans (linear time); the
  order is the same as 2.13's.
- `split_attrs_last` (SPL-4): from 2.13 `split_module` puts a partition's nn.Module get_attrs
  after all its placeholders; 2.11 and 2.12 keep them in input order, among the placeholders.
- `split_module_simple` (DIF-1): torch's `split_module_simple` (`--against torch-simple`) is
  new in 2.13; `split_tuple_return` (SPL-5): `split_module`'s `tuple_return` is new in 2.12
  (the reference has it on every release; only the comparison with torch needs it).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Literal

import torch

from reference.errors import FxOracleError

Tf32Key = Literal["allow_tf32", "fp32_precision"]
MIRRORED = ("2.11.0", "2.12.0", "2.13.0", "2.14.1", "2.15.0")  # the releases tested against
ANCHOR = "2.13.0"  # the default release (`.venv`), the one every other is compared with


@dataclass(frozen=True, slots=True)
class Behaviour:
    """The installed torch's version and the behaviours that differ between releases."""

    version: str
    tf32_key: Tf32Key
    hop_runs_body_eagerly: bool
    hop_marks_from_body: bool
    linear_sort: bool
    split_attrs_last: bool
    split_module_simple: bool
    split_tuple_return: bool

    @property
    def label(self) -> str:
        """`torch 2.13.0`: how reports name the torch they judged."""
        return f"torch {self.version}"


def release(version: str) -> tuple[int, int, int]:
    """`2.14.1+cu130` -> (2, 14, 1); a pre-release keeps its numbers (`2.15.0a0` -> 2.15.0)."""
    numbers = [int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3]]
    major, minor, patch = (*numbers, 0, 0, 0)[:3]
    return major, minor, patch


def mirrored_series() -> tuple[tuple[int, int], ...]:
    """The (major, minor) of every release fxoracle mirrors: a patch release of one is one too."""
    return tuple(dict.fromkeys(release(v)[:2] for v in MIRRORED))


def unmirrored(version: str) -> str:
    """The one line that refuses torch `version`: which releases fxoracle mirrors instead."""
    series = mirrored_series()
    first, last = (".".join(map(str, s)) for s in (series[0], series[-1]))
    return (
        f"fxoracle mirrors torch {first} to {last} (tested on {', '.join(MIRRORED)}); "
        f"this is torch {version}: install one of those (make setup TORCH={ANCHOR})"
    )


def behaviour_of(version: str) -> Behaviour:
    """What torch `version` does where releases differ; `FxOracleError` for a torch fxoracle
    does not mirror."""
    found = release(version)
    if found[:2] not in mirrored_series():
        raise FxOracleError(unmirrored(version))
    return Behaviour(
        version=".".join(str(n) for n in found),
        tf32_key="fp32_precision" if found >= (2, 15, 0) else "allow_tf32",
        hop_runs_body_eagerly=found >= (2, 14, 0),
        hop_marks_from_body=(2, 13, 0) <= found < (2, 14, 0),
        linear_sort=found >= (2, 15, 0),
        split_attrs_last=found >= (2, 13, 0),
        split_module_simple=found >= (2, 13, 0),
        split_tuple_return=found >= (2, 12, 0),
    )


def installed(version: str) -> Behaviour:
    """The behaviour of the installed torch `version`; on a torch fxoracle does not mirror, one
    line on stderr and exit 2: the packages import this first, so nothing that reads torch's
    internals has run (and failed with a traceback) yet."""
    try:
        return behaviour_of(version)
    except FxOracleError as e:
        print(f"fxoracle: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


TORCH = installed(torch.__version__)
