"""Chapter 01 worked example: the keys of `x0 = x + 1` in two iterations of one loop."""

import operator

import torch

from reference.dynamo.capture import capture


def model(x: torch.Tensor) -> torch.Tensor:
    out = x
    for scale in (1, 2):
        out = (out + 1) * scale
    return out


c = capture(model, (torch.ones(2, 3),))
adds = [n for n in c.gm.graph.nodes if n.target is operator.add]
muls = [n for n in c.gm.graph.nodes if n.target is operator.mul]
keys = c.tracker.node_to_key
print("add nodes share a key:", keys[adds[0]] == keys[adds[1]])
print("mul nodes share a key:", keys[muls[0]] == keys[muls[1]])
k = keys[muls[1]]
print("second mul's target:", k.target)
print("second mul's arguments:")
for arg in k.args:
    print("   ", arg)
line = k.call_site.line if k.call_site else "?"
print("summary:", f"{k.op} {k.target} at key_loop.py:{line}")
