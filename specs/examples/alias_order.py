"""Chapter 09 worked example: a view read before an in-place update of its base must stay
before it.

`v` views `h`; `a` reads `v`, then `h.add_(1)` writes the storage they share, then `b` reads `v`
again. The picture lists every node touching that storage and the ordering edges between them.
Then `a` is moved to the end of the graph, as the replacer moves a region it outlines into a
call, and the graph is sorted with torch's edges (SRT-6 only) and with fxoracle's (SRT-12 too).
"""

import torch

from checker.tools.render.pictures import storage_timeline
from reference.dynamo.capture import capture
from reference.effects.alias_db import AliasDB
from reference.sort.deps import OrderingDeps
from reference.sort.stable import stable_topological_sort
from reference.policy import Policy


def model(x: torch.Tensor) -> torch.Tensor:
    h = x * 1.0
    v = h.view(-1)
    a = v.sin()
    h.add_(1)
    b = v.cos()
    return a + b


x = torch.tensor([[0.5, 1.0]])
c = capture(model, (x,))
graph = c.gm.graph
ours = OrderingDeps.from_graph(graph).as_mapping()
torchs = OrderingDeps.from_graph(graph, policy=Policy(order_aliases=False)).as_mapping()
h = next(n for n in graph.nodes if n.name == "h")
print(storage_timeline(graph, AliasDB(graph), ours, torchs, h))
print()


def shown(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in t.flatten().tolist()) + "]"


print("eager:", shown(model(x.clone())))
for label, deps in (("torch's edges", torchs), ("fxoracle's edges", ours)):
    c = capture(model, (x,))
    a = next(n for n in c.gm.graph.nodes if n.name == "a")
    next(n for n in c.gm.graph.nodes if n.op == "output").prepend(a)  # a call appended last
    named = {n.name: n for n in c.gm.graph.nodes}
    stable_topological_sort(c.gm.graph, {named[k.name]: [named[d.name] for d in v]
                                         for k, v in deps.items()})  # fmt: skip
    c.gm.recompile()
    order = " ".join(n.name for n in c.gm.graph.nodes if n.op == "call_function" or
                     n.op == "call_method")  # fmt: skip
    print(f"{label}: {order} -> {shown(c.gm(x.clone())[0])}")
