"""Chapter 05 picture: a split plan with a prelude and an epilogue.

An autocast block is cut between two partitions: `submod_0` opens it and must close it again
before it returns (an epilogue), `submod_1` runs the rest of the block and must open it first
(a prelude). The picture is drawn from `plan_split`'s plan, which `split_module` builds.

    a = sin(x);  with autocast(bf16): b = mm(a, a) | c = relu(b);  d = c + 1
"""

import torch
import torch.fx

from checker.tools.render.pictures import split_picture
from reference.split import split_module
from reference.split.plan import plan_split


def build() -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = g.create_node("call_function", torch.sin, (x,), name="a")
    on = g.create_node("call_function", torch.amp._enter_autocast,
                       ("cpu", torch.bfloat16, True, None), name="enter")  # fmt: skip
    b = g.create_node("call_function", torch.mm, (a, a), name="b")
    c = g.create_node("call_function", torch.relu, (b,), name="c")
    g.create_node("call_function", torch.amp._exit_autocast, (on,), name="leave")
    d = g.create_node("call_function", torch.add, (c, 1), name="d")
    g.output(d)
    return torch.fx.GraphModule(torch.nn.Module(), g)


gm = build()
second = {"c", "leave", "d"}


def policy(node: torch.fx.Node) -> int:
    return 1 if node.name in second else 0


print(split_picture(gm.graph, plan_split(gm, policy)))
x = torch.eye(2)
split = split_module(gm, None, policy)
print()
print("d.dtype: original", gm(x).dtype, "| split", split(x).dtype)
print("autocast on after the split ran:", torch.is_autocast_enabled("cpu"))
