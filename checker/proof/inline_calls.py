"""Executable inlining: a copy of a module with every `invoke_subgraph` call replaced by the body
it runs (spec chapter 06, CHK-6).

The numbers obligation runs the transformed module's *meaning*, not torch's runtime for the
higher-order op: torch's eager `invoke_subgraph` retraces its body on every call and, in grad
mode, runs it on uninitialised copies of its operands to learn the output metadata, which can
fail (an int64 index filled with garbage) on graphs that are right. Whether torch's runtime runs
the module is a separate obligation (CHK-17). Bodies are inlined recursively; a body's own
attributes (a higher-order op's body inside it) are fetched through the subgraph's path
(`subgraph_0.fwd_body_1`), so nothing is copied. `call_module` of split submodules is kept.
This module touches torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

import torch
import torch.fx

from reference.names import INVOKE

Node = torch.fx.Node
Env = dict[Node, Any]  # a node of the module being copied -> its value in the new graph


def inline_calls(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A new module over `gm` (attributes shared) computing what `gm` computes, with no
    `invoke_subgraph` left; `gm` itself is unchanged."""
    graph = torch.fx.Graph()
    graph._codegen = gm.graph._codegen  # the same calling convention
    env: Env = {}
    for node in gm.graph.nodes:
        if node.op == "output":
            graph.output(_map(node.args[0], env))
        else:
            env[node] = _copy(graph, gm, "", node, env)
    found = torch.fx.GraphModule(gm, graph, class_name="Inlined")
    return found


def _copy(
    graph: torch.fx.Graph, module: torch.fx.GraphModule, path: str, node: Node, env: Env
) -> Any:
    """The value of `node` (of `module`, at attribute path `path`) in the new graph."""
    if node.op == "call_function" and node.target is INVOKE:
        return _inline(graph, module, path, node, env)
    if node.op == "call_function" and node.target is operator.getitem:
        source = node.args[0]
        if isinstance(source, Node) and isinstance(env.get(source), tuple):
            return env[source][node.args[1]]  # an element of an inlined call's result
    if node.op == "get_attr":
        return graph.get_attr(f"{path}{node.target}")
    copied = graph.node_copy(node, lambda n: env[n])
    if node.op == "call_module":
        copied.target = f"{path}{node.target}"
    return copied


def _inline(
    graph: torch.fx.Graph, module: torch.fx.GraphModule, path: str, call: Node, env: Env
) -> tuple[Any, ...]:
    """The outputs of `call`'s body, its nodes copied into `graph` with its placeholders bound
    to the call's operands."""
    fetch = call.args[0]
    assert isinstance(fetch, Node) and fetch.op == "get_attr", "CHK-1: the callee is a get_attr"
    body = module.get_submodule(str(fetch.target))
    assert isinstance(body, torch.fx.GraphModule), "CHK-1: the callee is a graph module"
    inner_path = f"{path}{fetch.target}."
    operands = iter(_map(call.args[2:], env))
    inner: Env = {}
    result: tuple[Any, ...] = ()
    for node in body.graph.nodes:
        if node.op == "placeholder":
            inner[node] = next(operands)
        elif node.op == "output":
            result = tuple(_map(node.args[0], inner))
        else:
            inner[node] = _copy(graph, body, inner_path, node, inner)
    return result


def _map(value: Any, env: Mapping[Node, Any]) -> Any:
    return torch.fx.map_arg(value, lambda n: env[n])
