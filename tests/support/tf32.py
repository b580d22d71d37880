"""torch's TF32 flags set for a test and restored after, precision by precision (CHK-19)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

# every fp32 precision torch keeps, by backend and op
PRECISIONS = [("generic", "all")] + [(b, o) for b in ("cuda", "mkldnn")
                                     for o in ("all", "matmul", "conv", "rnn")]  # fmt: skip


def precisions() -> dict[tuple[str, str], str]:
    """Every fp32 precision torch keeps now, by (backend, op)."""
    return {(b, o): torch._C._get_fp32_precision_getter(b, o) for b, o in PRECISIONS}


@contextmanager
def tf32_flags(matmul: str, cudnn: bool) -> Iterator[None]:
    """`torch.set_float32_matmul_precision(matmul)` and cuDNN's `allow_tf32 = cudnn` inside; after,
    every precision as it was. Restoring the two flags is not enough: their setters turn a
    precision of "none" into "ieee", which torch 2.15 keys (TRK-2), so a later test's keys differ
    from a fresh process's."""
    legacy = torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32
    before = precisions()
    torch.set_float32_matmul_precision(matmul)
    torch.backends.cudnn.allow_tf32 = cudnn
    try:
        yield
    finally:  # the flags first: torch raises where they and the precisions disagree
        torch.set_float32_matmul_precision(legacy[0])
        torch.backends.cudnn.allow_tf32 = legacy[1]
        for (backend, op), precision in before.items():
            torch._C._set_fp32_precision_setter(backend, op, precision)
