"""Build the graphs of a split from its plan (spec chapter 05, SPL-2, SPL-4, SPL-5, SPL-9,
SPL-12, SPL-14).

The plan has decided everything; this module only creates nodes, in torch's order so the
result can be compared with torch's node by node: per partition, the state preludes, the
placeholders, the nn.Module get_attrs, the copied nodes, the autocast epilogues and the output;
then the base graph that calls the partitions in plan order.
"""

from __future__ import annotations

import inspect
import itertools
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.fx

from reference.fx_helpers import NodeIndex
from reference.split.graph import NodeKind, PartitionId, resolve_attr
from reference.split.plan import PartitionPlan, SplitPlan
from reference.torch_version import TORCH


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """The naming and layout options of `split_module`."""

    keep_original_order: bool = False
    keep_original_node_name: bool = False
    keep_original_input_name: bool = True
    partition_affix: str | None = None
    tuple_return: bool = False

    def submod_name(self, pid: PartitionId) -> str:
        """`submod_<id>`, or `submod_<affix>_<id>` (SPL-2)."""
        affix = "" if self.partition_affix is None else f"{self.partition_affix}_"
        return f"submod_{affix}{pid}"


def _copy_meta(new: torch.fx.Node, old: torch.fx.Node) -> torch.fx.Node:
    new.meta = old.meta.copy()
    return new


def _open_partition(
    gm: torch.fx.GraphModule,
    nodes: Sequence[torch.fx.Node],
    part: PartitionPlan,
    options: BuildOptions,
) -> tuple[torch.fx.Graph, dict[torch.fx.Node, torch.fx.Node], dict[str, Any]]:
    """A partition graph with its preludes, placeholders and module get_attrs (SPL-4, SPL-9)."""
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    targets: dict[str, Any] = {}
    for i in part.preludes:  # re-establish the state first, as torch does
        node = nodes[i]
        new = graph.create_node(node.op, node.target, node.args, {}, type_expr=node.type)
        env[node] = _copy_meta(new, node)
    modules, placeholders = set(part.module_attrs), itertools.count()
    for i in part.inputs + part.module_attrs if TORCH.split_attrs_last else part.input_order:
        if i in modules:
            target = cast(str, nodes[i].target)
            targets[target] = resolve_attr(gm, target)
            env[nodes[i]] = _copy_meta(graph.get_attr(target), nodes[i])
            continue
        name = nodes[i].name if options.keep_original_input_name else f"arg_{next(placeholders)}"
        env[nodes[i]] = _copy_meta(graph.placeholder(name, type_expr=nodes[i].type), nodes[i])
    return graph, env, targets


def build_partition(
    gm: torch.fx.GraphModule,
    nodes: Sequence[torch.fx.Node],
    part: PartitionPlan,
    exits: Mapping[NodeIndex, NodeIndex],
    options: BuildOptions,
    qualname_map: dict[str, str] | None,
) -> torch.fx.GraphModule:
    """The submodule of one partition; fills `qualname_map` for its call_module nodes (SPL-14)."""
    graph, env, targets = _open_partition(gm, nodes, part, options)
    prefix = options.submod_name(part.pid)
    for i in part.nodes:
        env[nodes[i]] = _copy_node(gm, graph, env, nodes[i], options, targets)
        if nodes[i].op == "call_module" and qualname_map is not None:
            qualname_map[f"{prefix}.{_flat(nodes[i])}"] = cast(str, nodes[i].target)
    for i in part.epilogues:  # SPL-9: close the autocast this partition opened or re-opened
        end = nodes[exits[i]]
        new = graph.create_node(end.op, end.target, (env[nodes[i]],), {}, type_expr=end.type)
        _copy_meta(new, end)
    values = tuple(env[nodes[i]] for i in part.outputs)
    single = len(values) == 1 and not options.tuple_return
    graph.output(values[0] if single else values)  # SPL-5
    return torch.fx.GraphModule(targets, graph)


def _flat(node: torch.fx.Node) -> str:
    return cast(str, node.target).replace(".", "_")


def _copy_node(
    gm: torch.fx.GraphModule,
    graph: torch.fx.Graph,
    env: Mapping[torch.fx.Node, torch.fx.Node],
    node: torch.fx.Node,
    options: BuildOptions,
    targets: dict[str, Any],
) -> torch.fx.Node:
    target = node.target
    if node.op == "call_module":
        target = _flat(node)
        targets[target] = resolve_attr(gm, cast(str, node.target))
    new = graph.create_node(
        node.op,
        target,
        cast(tuple[Any, ...], torch.fx.map_arg(node.args, env.__getitem__)),
        cast(dict[str, Any], torch.fx.map_arg(node.kwargs, env.__getitem__)),
        type_expr=node.type,
        name=node.name if options.keep_original_node_name else None,
    )
    return _copy_meta(new, node)


@dataclass(slots=True)
class _Base:
    """The base graph under construction: nodes by original node, attributes to install."""

    graph: torch.fx.Graph
    env: dict[torch.fx.Node, torch.fx.Node]
    attrs: dict[str, Any]


def _emit_input(
    gm: torch.fx.GraphModule, base: _Base, node: torch.fx.Node, keep_name: bool
) -> None:
    """A base-graph placeholder (default kept, SPL-12) or get_attr, once per original node."""
    if node in base.env:
        return
    if node.op == "get_attr":
        target = cast(str, node.target)
        base.attrs[target] = resolve_attr(gm, target)
        base.env[node] = _copy_meta(base.graph.get_attr(target), node)
        return
    default = node.args[0] if node.args else inspect.Signature.empty
    if keep_name:
        args: tuple[Any, ...] = () if default is inspect.Signature.empty else (default,)
        new = base.graph.create_node("placeholder", node.name, args, type_expr=node.type)
    else:
        new = base.graph.placeholder(cast(str, node.target), node.type, default_value=default)
    base.env[node] = _copy_meta(new, node)


def _emit_call(
    base: _Base, name: str, nodes: Sequence[torch.fx.Node], part: PartitionPlan, tuple_return: bool
) -> None:
    """Call one submodule and bind its outputs, unpacking a tuple with getitem (SPL-5)."""
    call = base.graph.call_module(name, tuple(base.env[nodes[i]] for i in part.inputs))
    if len(part.outputs) == 1 and not tuple_return:
        base.env[nodes[part.outputs[0]]] = call
        return
    for k, i in enumerate(part.outputs):
        base.env[nodes[i]] = base.graph.call_function(operator.getitem, (call, k))


def build_split(
    gm: torch.fx.GraphModule,
    plan: SplitPlan,
    options: BuildOptions,
    qualname_map: dict[str, str] | None = None,
) -> torch.fx.GraphModule:
    """The split module: the base graph calling one submodule per partition (SPL-12)."""
    nodes = list(gm.graph.nodes)
    base = _Base(torch.fx.Graph(), {}, {})
    kinds = [f.kind for f in plan.facts.nodes]
    exits = {f.closes: NodeIndex(i) for i, f in enumerate(plan.facts.nodes) if f.closes is not None}
    ordered_inputs = options.keep_original_order and plan.partitions
    for node, kind in zip(nodes, kinds, strict=True):
        if kind is NodeKind.PLACEHOLDER or (not ordered_inputs and node.op == "get_attr"):
            _emit_input(gm, base, node, options.keep_original_node_name)
    for pid in plan.order:
        part = plan.partition(pid)
        name = options.submod_name(pid)
        base.attrs[name] = build_partition(gm, nodes, part, exits, options, qualname_map)
        for i in part.inputs:  # with keep_original_order, get_attrs just before their use
            if nodes[i].op == "get_attr":
                _emit_input(gm, base, nodes[i], options.keep_original_node_name)
        _emit_call(base, name, nodes, part, options.tuple_return)
    (output,) = (n for n, k in zip(nodes, kinds, strict=True) if k is NodeKind.OUTPUT)
    for node in output.all_input_nodes:  # SPL-12: get_attrs only the output uses
        if node.op == "get_attr":
            _emit_input(gm, base, node, options.keep_original_node_name)
    base.graph.output(torch.fx.map_arg(output.args[0], base.env.__getitem__))
    result = torch.fx.GraphModule(base.attrs, base.graph)
    result.meta["partition_names"] = {options.submod_name(p.pid) for p in plan.partitions}
    return result
