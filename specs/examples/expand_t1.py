"""Chapter 02 worked example: scenario T1 narrated by `fxoracle explain`."""

import torch

from checker.tools.explain import lesson_of, render_text
from reference.dynamo.capture import capture


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = x + 1
    y0 = y + 2
    return x0.sum() + y0.sum()


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    o0 = inner(x, y)
    o1 = torch.sin(y)
    o2 = inner(x, o1)
    o3 = inner(x, y)
    return o2 * (o3 * o3) + o0


c = capture(model, (torch.rand(10, 10), torch.rand(10, 20)))
print(render_text(lesson_of("t1", c)), end="")
