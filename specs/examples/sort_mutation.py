"""Chapter 04 worked example: a scrambled 6-node graph with a mutation, before and after the sort.

`before` reads x before `x.add_(1)` and `after` reads it after. The mutation dependencies
(SRT-6) are computed on the graph in its original order and drawn on x's users; then the graph
is scrambled and sorted twice, with and without them.
"""

import textwrap

import torch
import torch.fx

from checker.tools.render.pictures import sort_steps, users_picture
from reference.sort.deps import OrderingDeps
from reference.sort.stable import SortStep, node_deps, order_indices, stable_topological_sort


def build() -> tuple[torch.fx.GraphModule, dict[str, torch.fx.Node]]:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    before = g.create_node("call_function", torch.sin, (x,), name="before")
    g.create_node("call_method", "add_", (x, 1), name="add_")
    after = g.create_node("call_function", torch.cos, (x,), name="after")
    out = g.create_node("call_function", torch.add, (before, after), name="out")
    g.output(out)
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    return gm, {n.name: n for n in g.nodes}


def scramble(n: dict[str, torch.fx.Node]) -> None:
    """x, out, after, add_, before, output: every call in the wrong place."""
    n["x"].append(n["out"])
    n["out"].append(n["after"])
    n["after"].append(n["add_"])


def show(gm: torch.fx.GraphModule, extra: dict[torch.fx.Node, tuple[torch.fx.Node, ...]]) -> None:
    print("  position  node     must follow (data args, then extra deps)")
    for i, node in enumerate(gm.graph.nodes):
        deps = ", ".join(d.name for d in node_deps(node, extra)) or "-"
        print(f"  {i:<8}  {node.name:<7}  {deps}")


def run(gm: torch.fx.GraphModule) -> str:
    gm.recompile()
    out = gm(torch.tensor([0.5, 1.0]))
    return "[" + ", ".join(f"{v:.4f}" for v in out.tolist()) + "]"


reference, _ = build()
print("original order:", ", ".join(n.name for n in reference.graph.nodes))
print("original result:", run(reference))
print()

gm, nodes = build()
deps = OrderingDeps.from_graph(gm.graph, {nodes["add_"]: [0]})  # add_ mutates flat arg 0, x
print("x's users, in x.users order, and the extra deps SRT-6 adds between them:")
print(textwrap.indent(users_picture(nodes["x"], deps.as_mapping(), {nodes["add_"]}), "  "))
scramble(nodes)
print()
print("scrambled:")
show(gm, deps.as_mapping())
print()
print("the sort, visit by visit:")
body = [n for n in gm.graph.nodes if n.op != "output"]
position = {n: i for i, n in enumerate(body)}
visits: list[SortStep] = []
order_indices(len(body), [[position[d] for d in node_deps(n, deps.as_mapping())] for n in body],
              visits.append)  # fmt: skip
print(textwrap.indent(sort_steps([n.name for n in body], visits), "  "))
stable_topological_sort(gm.graph, deps.as_mapping())
print()
print("sorted with the extra deps:", ", ".join(n.name for n in gm.graph.nodes))
print("result:", run(gm))

gm, nodes = build()
scramble(nodes)
stable_topological_sort(gm.graph, {})
print("sorted without them:       ", ", ".join(n.name for n in gm.graph.nodes))
print("result:", run(gm))
