"""Executable inlining: a copy of a module with every `invoke_subgraph` call replaced by the body
it runs (spec chapter 06, CHK-6).

The numbers obligation runs the transformed module's *meaning*, not torch's runtime for the
higher-order op: torch's eager `invoke_subgraph` retraces its body on every call and, in grad
mode, runs it on uninitialised copies of its operands to learn the output metadata, which can
fail (an int64 index filled with garbage) on graphs that are right. Whether torch's runtime runs
the module is a separate obligation (CHK-17). The module is built from the same walk as the flat
graph (`checker.proof.inline`), one node per emission; a body's own attributes (a higher-order
op's body inside it) are fetched through the subgraph's path (`subgraph_0.fwd_body_1`), so
nothing is copied. `call_module` of split submodules is kept. This module touches torch
objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

from checker.proof.inline import Callee, Emitted, Ref, Value, inline

Node = torch.fx.Node


class _Builder:
    """The new graph, one node per emission so far, and the bodies fetched by path."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        self.graph = torch.fx.Graph()
        self.graph._codegen = gm.graph._codegen  # the same calling convention
        self.built: list[Node] = []
        self.fetched: dict[str, Node] = {}

    def node_of(self, value: Value) -> Any:
        """The new graph's node (or tuple of nodes) holding `value`."""
        if isinstance(value, Ref):
            return self.built[value.index]
        if isinstance(value, Callee):  # a body passed to another higher-order op
            if value.path not in self.fetched:
                self.fetched[value.path] = self.graph.get_attr(value.path)
            return self.fetched[value.path]
        return tuple(self.node_of(v) for v in value)

    def copy(self, e: Emitted) -> Node:
        node = e.node
        if node.op == "get_attr":
            return self.graph.get_attr(f"{e.path}{node.target}")
        copied = self.graph.node_copy(node, lambda arg: self.node_of(e.args[arg]))
        if node.op == "call_module":
            copied.target = f"{e.path}{node.target}"
        return copied


def inline_calls(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A new module over `gm` (attributes shared) computing what `gm` computes, with no
    `invoke_subgraph` left; `gm` itself is unchanged."""
    inlined = inline(gm, modules=False)
    builder = _Builder(gm)
    for e in inlined.emitted:
        builder.built.append(builder.copy(e))
    result = torch.fx.map_arg(inlined.output.args[0], lambda n: builder.node_of(inlined.env[n]))
    builder.graph.output(result)
    return torch.fx.GraphModule(gm, builder.graph, class_name="Inlined")
