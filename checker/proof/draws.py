"""Random draws: the state of every generator a run can draw from, the CPU's and each CUDA
device's (spec chapter 06, CHK-20).

`seeded()` forks every generator, seeds them all with the checker's seed and restores them
afterwards: each side of a comparison starts from the same draws and nothing outside the run
changes. `Draws.now()` snapshots the states so that one call can be run twice from the same
draws (CHK-17) and the states it left compared. CUDA devices are read only when torch has
initialised CUDA already: a run on the CPU never starts a CUDA context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from checker.proof.number_inputs import SEED

_initialised: Callable[[], bool] = torch.cuda.is_initialized  # torch leaves it untyped


def cuda_devices() -> list[int]:
    """The CUDA devices a run may have drawn on: all of them once CUDA is initialised."""
    if not torch.cuda.is_available() or not _initialised():
        return []
    return list(range(torch.cuda.device_count()))


@contextmanager
def seeded(seed: int = SEED) -> Iterator[None]:
    """Every generator (CPU and each CUDA device) seeded with `seed` inside, as it was after."""
    with torch.random.fork_rng(devices=cuda_devices()):
        torch.manual_seed(seed)  # seeds the CPU generator and every CUDA device's
        yield


@dataclass(frozen=True, slots=True, eq=False)
class Draws:
    """The states of the CPU generator and of each CUDA device's, by device index."""

    cpu: torch.Tensor
    cuda: tuple[torch.Tensor, ...]

    @staticmethod
    def now() -> Draws:
        cuda = tuple(torch.cuda.get_rng_state(d) for d in cuda_devices())
        return Draws(torch.random.get_rng_state(), cuda)

    def restore(self) -> None:
        torch.random.set_rng_state(self.cpu)
        for device, state in enumerate(self.cuda):
            torch.cuda.set_rng_state(state, device)

    def same_as(self, other: Draws) -> bool:
        """Every generator in the same state (a device initialised in between differs)."""
        pairs = [(self.cpu, other.cpu)]
        if len(self.cuda) != len(other.cuda):
            return False
        pairs += list(zip(self.cuda, other.cuda, strict=True))
        return all(torch.equal(a, b) for a, b in pairs)
