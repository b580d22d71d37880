"""torch's intra-op threads for a block of work."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def one_thread() -> Iterator[None]:
    """One intra-op thread for the block, then as many as before: reductions add in one
    order, tiny ops do not wait on busy cores (a thread pool on a shared 2-core machine made a
    32x128 linear take milliseconds), and N processes each on one thread scale on N cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
