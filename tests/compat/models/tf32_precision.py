"""A model file that sets TF32 matmuls through the new API
(`torch.backends.cuda.matmul.fp32_precision = "tf32"`) before it is captured. torch and
2.14's tracker then raises while keying (`_get_cublas_allow_tf32()`, finding N6); 2.15 keys the
precision string. Run in its own process: the setting is global."""

import torch

torch.backends.cuda.matmul.fp32_precision = "tf32"


def block(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w) + x


def model(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    for _ in range(3):
        x = block(x, w)
    return x


_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(4, 8, generator=_g), torch.randn(8, 8, generator=_g))
