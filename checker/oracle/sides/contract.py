"""What a plug-in returns, checked against the contract (spec chapter 08, DIF-12).

Each function takes what a method returned and gives it back in the oracle's terms, or raises
`ContractError` naming the field that breaks the contract (`find_regions returned
groups[0][1][2] = 3, not a node name`, `... = 'x9', not a node of the graph`). The oracle
reports that as a `contract` divergence blamed on the plug-in, never as its own error.
"""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Collection, Sequence

import torch
import torch.fx

from checker.oracle.protocol import DedupOutput, RegionGroups

Node = torch.fx.Node
TRACEBACK_CHARS = 4000  # the end of a traceback kept in a report


class ContractError(Exception):
    """A plug-in's return value breaks the contract; the message names the field."""


def region_groups(
    value: object, graph: torch.fx.Graph, method: str = "find_regions"
) -> RegionGroups:
    """Groups of regions of node names (nodes are taken by name), every one a node of `graph`
    (DIF-12)."""
    known = {n.name for n in graph.nodes}
    groups = []
    for g, group in enumerate(_items(value, f"{method} returned", "a sequence of groups")):
        regions = []
        for r, region in enumerate(_items(group, f"{method} returned groups[{g}] =", "regions")):
            where = f"{method} returned groups[{g}][{r}]"
            nodes = _items(region, f"{where} =", "a sequence of nodes")
            regions.append(tuple(_name(n, where, k, known) for k, n in enumerate(nodes)))
        groups.append(tuple(regions))
    return tuple(groups)


def _items(value: object, where: str, wanted: str) -> Sequence[object]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ContractError(f"{where} {_what(value)}, not {wanted}")
    return value


def _name(value: object, where: str, k: int, known: Collection[str]) -> str:
    name = value.name if isinstance(value, Node) else value
    if type(name) is not str:  # a subclass's own __eq__ or __hash__ would run in the oracle
        raise ContractError(f"{where}[{k}] = {_what(value)}, not a node name")
    if name not in known:
        raise ContractError(f"{where}[{k}] = {name!r}, not a node of the graph")
    return name


def dedup_output(value: object, graph: torch.fx.Graph) -> DedupOutput:
    """A `DedupOutput` whose `transformed` is a graph module and whose groups name nodes of
    `graph`, the graph the pass was given, with `transformed` and its graph-module children
    recompiled from their graphs."""
    if not isinstance(value, DedupOutput):
        raise ContractError(f"deduplicate returned {_what(value)}, not a DedupOutput")
    if not isinstance(value.transformed, torch.fx.GraphModule):
        raise ContractError(f"deduplicate returned DedupOutput.transformed = "
                            f"{_what(value.transformed)}, not a GraphModule")  # fmt: skip
    region_groups(value.groups, graph, "deduplicate: DedupOutput.groups")
    for module in value.transformed.modules():  # DIF-21: a pass need not recompile
        if isinstance(module, torch.fx.GraphModule):
            module.recompile()
    return value


def split_output(value: object) -> torch.fx.GraphModule:
    if not isinstance(value, torch.fx.GraphModule):
        raise ContractError(f"split returned {_what(value)}, not a GraphModule")
    return value


def same_nodes(before: Sequence[str], graph: torch.fx.Graph) -> None:
    """`stable_sort` may only move nodes: the graph holds the same nodes as before."""
    after = [n.name for n in graph.nodes]
    erased = sorted((Counter(before) - Counter(after)).elements())
    added = sorted((Counter(after) - Counter(before)).elements())
    if erased:
        raise ContractError(f"stable_sort erased nodes {', '.join(erased[:5])}")
    if added:
        raise ContractError(f"stable_sort added nodes {', '.join(added[:5])}")


def traceback_of(e: BaseException) -> str:
    """The end of `e`'s traceback, for the report (the plug-in's author reads it)."""
    return "".join(traceback.format_exception(e))[-TRACEBACK_CHARS:]


def _what(value: object) -> str:
    """`value` as a contract error shows it: its repr, or its type when that is long or
    raises (a plug-in's object runs no code of its own in the oracle's messages)."""
    try:
        text = repr(value) if type(value) in (str, int, float, bool, type(None)) else ""
    except Exception:
        text = ""
    return text if text and len(text) <= 40 else f"a {type(value).__name__}"
