"""Chapter 02 worked example: a node queued twice. Each block has two residual additions, so
`h` is read by the root `x = h + tanh(cos(h))` and by `cos`: it enters region 0's queue twice,
is refused the first time (EXP-8) and joins the second."""

import torch

from checker.tools.explain import lesson_of, render_text
from reference.dynamo.capture import capture


def block(x: torch.Tensor) -> torch.Tensor:
    h = x + torch.sin(x).relu()
    return h + torch.cos(h).tanh()


def model(x: torch.Tensor) -> torch.Tensor:
    for _ in range(3):
        x = block(x)
    return x


c = capture(model, (torch.randn(4),))
print(render_text(lesson_of("two_residuals", c)), end="")
