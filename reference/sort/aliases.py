"""Ordering deps torch does not have: writes ordered against every alias, and random draws kept
in order (spec chapter 04, SRT-12 and SRT-13; the storage classes come from chapter 09's alias
DB). `reference.sort.rules.effect_rules` adds `access_order` to the deps' rules when the policy
asks for either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from torch.fx import Graph, Node

from reference.effects.alias_db import RNG, AliasDB, StorageClass
from reference.fx_helpers import flat_node_args


def ordered_classes(aliases: bool, draws: bool) -> Callable[[StorageClass], bool]:
    """Which storage classes are ordered: with `aliases` every class but the generator's
    (SRT-12), with `draws` the generator's, `RNG` (SRT-13)."""
    return lambda cls: draws if cls == RNG else aliases


def access_order(
    graph: Graph,
    db: AliasDB,
    writes: Mapping[Node, Sequence[int]],
    *,
    ordered: Callable[[StorageClass], bool],
) -> Iterator[tuple[Node, Node]]:
    """`(node, dep)`: per `ordered` storage class, a write follows the previous write and every
    read since it, and a read follows the last write before it; the random generator is a class
    every draw writes. Data edges are left out, so a graph whose accesses all go through the
    written node itself gets no edge that torch's rule (SRT-6) does not add."""
    last: dict[StorageClass, Node] = {}
    since: dict[StorageClass, list[Node]] = {}
    for node in graph.nodes:
        written, args = db.writes(node), set(flat_node_args(node))
        for cls in sorted(c for c in db.reads(node) | written if ordered(c)):
            before = [last[cls]] if cls in last else []
            if cls in written:
                before += since.pop(cls, [])
                last[cls] = node
            else:
                since.setdefault(cls, []).append(node)
            for dep in before:
                if dep is not node and dep not in args:
                    yield node, dep
