"""Chapter 03 worked example: scenario D1 deduplicated; the graph and the subgraph printed."""

import torch

from reference import deduplicate
from reference.dynamo.capture import capture


def inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x0 = x + 1
    y0 = y + 2
    return x0.sum() + y0.sum()


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    inner(x, y)
    o1 = torch.sin(y)
    o2 = inner(x, o1)
    o3 = inner(x, y)
    return o2 * (o3 * o3)


c = capture(model, (torch.rand(10, 10), torch.rand(10, 20)))
result = deduplicate(c.gm, c.tracker)
print(c.gm.code.strip())
print()
print(result.subgraphs["subgraph_0"].code.strip())
