"""Chapter 05 worked example: the plan of B6, a graph with a `no_grad` region, one call per
partition; then the reference's split and torch 2.13's split run on an input that needs grad.

    a = sin(x);  with no_grad: e = cos(a);  return e + a, a
"""

import torch
import torch.fx
from torch.fx.passes.split_module import split_module as torch_split_module

from reference.split import split_module
from reference.split.plan import plan_split


def build() -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = g.create_node("call_function", torch.sin, (x,), name="a")
    g.create_node("call_function", torch._C._set_grad_enabled, (False,), name="no_grad")
    e = g.create_node("call_function", torch.cos, (a,), name="e")
    g.create_node("call_function", torch._C._set_grad_enabled, (True,), name="grad")
    total = g.create_node("call_function", torch.add, (e, a), name="total")
    g.output((total, a))
    return torch.fx.GraphModule(torch.nn.Module(), g)


gm = build()
ids = {"a": 0, "no_grad": 1, "e": 2, "grad": 3, "total": 4}


def policy(node: torch.fx.Node) -> int:
    return ids[node.name]


plan = plan_split(gm, policy)
name = [n.name for n in gm.graph.nodes]


def cell(indices: tuple[int, ...]) -> str:
    return ", ".join(name[i] for i in indices) or "-"


print("partition  nodes    inputs  outputs  preludes  dependents")
for p in plan.partitions:
    dependents = ", ".join(f"submod_{d}" for d in p.dependents) or "-"
    row = (f"submod_{p.pid}", cell(p.nodes), cell(p.inputs), cell(p.outputs), cell(p.preludes))
    print("{:<9}  {:<7}  {:<6}  {:<7}  {:<8}  {}".format(*row, dependents))
print()
print("order (reference, SPL-11):", " ".join(f"submod_{p}" for p in plan.order))
print("order (torch 2.13, SPL-7):", " ".join(f"submod_{p}" for p in plan.upstream_order))
print()
x = torch.tensor([0.5, 1.0], requires_grad=True)
print("a.requires_grad: eager", bool(torch.sin(x).requires_grad), end="")
print(", reference", bool(split_module(gm, None, policy)(x)[1].requires_grad), end="")
print(", torch 2.13", bool(torch_split_module(gm, gm, policy)(x)[1].requires_grad))
