"""Chapter 06 worked example: a bug planted in a correct deduplication, and the checker's report.

`block(t) = relu(t * 1.5) + t` runs on x and on y; the reference outlines both calls into
`subgraph_0`. The planted bug changes the constant of the subgraph's `mul` to 2.5: every call
now computes something else. The original is copied before the in-place pass (CHK-14).
"""

import torch

from checker.proof.check import check_transformation
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate


def block(t: torch.Tensor) -> torch.Tensor:
    return torch.relu(t * 1.5) + t


def model(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return block(x) * block(y)


c = capture(model, (torch.randn(4), torch.randn(4)))
original = copy_graph_module(c.gm).gm
result = deduplicate(c.gm, c.tracker)
print("correct deduplication:")
print(check_transformation(original, c.gm, extra_deps=result.extra_deps).render_text())

body = result.subgraphs["subgraph_0"]
mul = next(n for n in body.graph.nodes if n.name == "mul")
mul.args = (mul.args[0], 2.5)
body.recompile()
print("planted bug: in subgraph_0, mul = t * 1.5 becomes t * 2.5")
print()
print(check_transformation(original, c.gm, extra_deps=result.extra_deps).render_text(), end="")
