"""Chapter 09 picture: one storage class, several names. `h = x * 1.0` allocates a storage;
`v = h.view(-1)` and `s = h[0]` are views of it, so the alias DB puts all three values in one
storage class (EFF-5): a write to any of them is a write to all."""

import torch

from checker.tools.render.pictures import storage_names
from reference.dynamo.capture import capture
from reference.effects.alias_db import AliasDB


def model(x: torch.Tensor) -> torch.Tensor:
    h = x * 1.0
    v = h.view(-1)
    s = h[0]
    return v * 2 + s.sum()


graph = capture(model, (torch.ones(2, 3),)).gm.graph
h = next(n for n in graph.nodes if n.name == "h")
print(storage_names(graph, AliasDB(graph), h))
