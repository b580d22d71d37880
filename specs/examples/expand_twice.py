"""Chapter 02 worked example: a node queued twice. Each block has two residual additions, so
`h` is read by the root `x = h + tanh(cos(h))` and by `cos`: it enters region 0's queue twice,
is refused the first time (EXP-8) and joins the second. The picture after the narration draws
the first refusal on the graph as captured: `h`'s users, the path from `cos` back to the root,
and the cycle the region's call would sit on."""

import torch

from checker.tools.explain import lesson_of, render_text
from checker.tools.render.pictures import cycle_picture
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module


def block(x: torch.Tensor) -> torch.Tensor:
    h = x + torch.sin(x).relu()
    return h + torch.cos(h).tanh()


def model(x: torch.Tensor) -> torch.Tensor:
    for _ in range(3):
        x = block(x)
    return x


c = capture(model, (torch.randn(4),))
original = {n.name: n for n in copy_graph_module(c.gm).gm.graph.nodes}
lesson = lesson_of("two_residuals", c)
print(render_text(lesson), end="")
group = lesson.groups[0]
k = next(k for k, s in enumerate(group.steps) if s.reason and s.reason.startswith("EXP-8"))
region = [group.roots[0], *(s.candidates[0] for s in group.steps[:k] if s.joined)]
print(f"\nstep {k + 1}, drawn on region 0:")
print(cycle_picture(original[group.steps[k].candidates[0]], [original[n] for n in region]))
