"""What makes one side's output wrong, whatever the other side found (spec chapter 08, DIF-4,
DIF-5).

Region groups are compared by node names: both sides capture the same model file, and Dynamo
names nodes deterministically. `region_faults` says what is wrong with a side's groups: a node
that is not in the graph, a node in two regions, or two nodes at one region position that compute
different things; `bucket_faults` what is wrong with a key (nodes it merges that differ);
`order_faults` what is wrong with a sort's order. Faults are records: their text is what reports
show, their fields what the catalogue of torch's bugs matches on (`known_bugs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from checker.oracle.compare.canon import CanonNode, render
from checker.oracle.protocol import RegionGroups
from reference.fx_helpers import target_name

Node = torch.fx.Node


@dataclass(frozen=True, slots=True)
class Unequal:
    """Two nodes paired that compute different things: at one position of group `group`'s
    regions, or (`group` None) in one bucket of a key; `first` is region 0's node, or the
    bucket's first."""

    node: str
    signature: CanonNode
    first: str
    first_signature: CanonNode
    group: int | None

    def __str__(self) -> str:
        this, first = f"{self.node} `{self.signature}`", f"{self.first} `{self.first_signature}`"
        if self.group is None:
            return f"{this} shares a key with {first}"
        return f"group {self.group}: {this} is not {first}"


@dataclass(frozen=True, slots=True)
class Overlap:
    """Node `node` is in region `region` of group `group` and in an earlier one, `owner`."""

    node: str
    owner: str
    group: int
    region: int

    def __str__(self) -> str:
        return f"{self.node} is in {self.owner} and in group {self.group} region {self.region}"


@dataclass(frozen=True, slots=True)
class UnknownNode:
    """Region `region` of group `group` names a node the graph does not have."""

    node: str
    group: int
    region: int

    def __str__(self) -> str:
        return f"group {self.group} region {self.region}: no node {self.node}"


RegionFault = Unequal | Overlap | UnknownNode


def region_faults(gm: torch.fx.GraphModule, groups: RegionGroups) -> tuple[RegionFault, ...]:
    """What is wrong with `groups` over `gm`'s nodes, whatever another side found (DIF-4):
    an unknown node, a node in two regions, or two corresponding nodes with different ops,
    targets, constants or input metadata."""
    by_name = {n.name: n for n in gm.graph.nodes}
    faults: list[RegionFault] = []
    owner: dict[str, str] = {}
    for g, group in enumerate(groups):
        for r, region in enumerate(group):
            for name in region:
                if name not in by_name:
                    faults.append(UnknownNode(name, g, r))
                elif name in owner:
                    faults.append(Overlap(name, owner[name], g, r))
                owner.setdefault(name, f"group {g} region {r}")
        faults += _unequal_positions(g, group, by_name)
    return tuple(faults)


def bucket_faults(
    gm: torch.fx.GraphModule, buckets: Sequence[Sequence[str]]
) -> tuple[Unequal, ...]:
    """Buckets of a tracker's key that hold nodes computing different things (DIF-4)."""
    by_name = {n.name: n for n in gm.graph.nodes}
    faults: list[Unequal] = []
    for bucket in buckets:
        found = [by_name[name] for name in bucket if name in by_name]
        nodes = [n for n in found if n.op not in ("placeholder", "get_attr")]  # never in regions
        if not nodes:
            continue
        sigs = [node_signature(n) for n in nodes]
        faults += [Unequal(n.name, s, nodes[0].name, sigs[0], None)
                   for n, s in zip(nodes, sigs, strict=True) if s != sigs[0]]  # fmt: skip
    return tuple(faults)


def _unequal_positions(
    g: int, group: Sequence[Sequence[str]], by_name: Mapping[str, Node]
) -> list[Unequal]:
    faults = []
    for position in zip(*group, strict=False):
        if not all(name in by_name for name in position):
            continue
        sigs = [node_signature(by_name[name]) for name in position]
        for r, sig in enumerate(sigs[1:], start=1):
            if sig != sigs[0]:
                faults.append(Unequal(position[r], sig, position[0], sigs[0], g))
    return faults


def node_signature(node: Node) -> CanonNode:
    """What `node` computes from its inputs."""
    meta = {a: _meta(a) for a in node.all_input_nodes}
    args = [_render_meta(a, meta) for a in node.args]
    args += [f"{k}={_render_meta(v, meta)}" for k, v in node.kwargs.items()]
    return CanonNode(node.op, target_name(node), ", ".join(args))


def _render_meta(value: Any, meta: Mapping[Node, str]) -> str:
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_render_meta(v, meta) for v in value) + ")"
    if isinstance(value, torch.fx.Node):
        return meta[value]
    return render(value, {})


def _meta(node: Node) -> str:
    value = node.meta.get("example_value", node.meta.get("val"))
    if isinstance(value, torch.Tensor):
        grad = ", grad" if value.requires_grad else ""
        return f"T{tuple(str(s) for s in value.shape)}:{value.dtype}{grad}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_meta_value(v) for v in value) + ")"
    return _meta_value(value)


def _meta_value(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"T{tuple(str(s) for s in value.shape)}:{value.dtype}"
    return type(value).__name__


def order_faults(gm: torch.fx.GraphModule, deps: Mapping[Node, Sequence[Node]]) -> str:
    """Why `gm`'s node order is not a valid order for its data and `deps` (empty if it is):
    a node before one of its inputs or extra dependencies, or the output not last (DIF-5)."""
    nodes = list(gm.graph.nodes)
    position = {n: i for i, n in enumerate(nodes)}
    outputs = [n for n in nodes if n.op == "output"]
    if outputs and outputs[-1] is not nodes[-1]:
        return f"the output is node {position[outputs[-1]]} of {len(nodes)}, not the last"
    for node in nodes:
        for dep in (*node.all_input_nodes, *deps.get(node, ())):
            if dep not in position:
                return f"{node.name} depends on {dep.name}, which is not in the graph"
            if position[dep] > position[node]:
                return f"{node.name} comes before its dependency {dep.name}"
    return ""
