"""Bad input to the sort and its ordering deps, named by spec id (chapter 04; FIL-6).

torch's `_stable_topological_sort` and `_populate_additional_deps` take their input on trust: a
position past the end is an `IndexError`, a dep outside the graph a bare "sort failed". The
reference says what is wrong, in one line (`FxOracleError`, exit 2 from the CLI). These checks
are what it adds, counted apart by `fxoracle bench --size`; each runs before the algorithm it
guards, so the algorithm reads as the spec states it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from torch.fx import Graph, Node

from reference.arguments import expect
from reference.errors import FxOracleError
from reference.fx_helpers import flat_node_args


def check_positions(n: int, deps: Sequence[Sequence[int]]) -> None:
    """`deps` holds one list for each of `n` nodes, each entry a position `0..n-1`. SRT-2."""
    if n < 0 or len(deps) != n:
        raise FxOracleError(f"SRT-2: expected deps for {n} nodes, got {len(deps)}")
    for node, dep in ((node, dep) for node, own in enumerate(deps) for dep in own):
        if not 0 <= dep < n:
            raise FxOracleError(f"SRT-2: node {node} depends on {dep}, outside 0..{n - 1}")


def check_sort_arguments(graph: object, additional_deps: object) -> None:
    """`stable_topological_sort`'s arguments have the right types. FIL-6."""
    expect(graph, Graph, "stable_topological_sort: graph")
    expect(additional_deps, Mapping, "stable_topological_sort: additional_deps")


def check_body_deps(deps: Mapping[Node, Sequence[Node]], body: Mapping[Node, int]) -> None:
    """Every node of `deps` depends on body nodes only: not on the output node, not on a node
    outside the graph (torch reports both as a failed sort). SRT-3, SRT-5."""
    for node, dep in ((node, dep) for node, own in deps.items() for dep in own):
        if dep not in body:
            where = "the output node" if dep.op == "output" else "a node outside the graph"
            raise FxOracleError(f"SRT-5: {node.name} depends on {dep.name}, {where}")


def check_order(rank: Mapping[Node, int], order: Sequence[Node]) -> None:
    """`order` lists every node that `rank` ranks, each exactly once. SRT-4."""
    if len(order) != len(rank) or set(order) != rank.keys():
        raise FxOracleError("SRT-4: the order must list every node of the graph exactly once")


def check_writes(graph: Graph, writes: Mapping[Node, Sequence[int]]) -> None:
    """Every writing node is in `graph` and writes flat args it has. SRT-6."""
    present = set(graph.nodes)
    for node, positions in writes.items():
        if node not in present:
            raise FxOracleError(f"SRT-6: mutating node {node.name} is not in the graph")
        for position in (p for p in positions if not 0 <= p < len(flat_node_args(node))):
            raise FxOracleError(f"SRT-6: {node.name} has no flat arg {position}")


def check_redirect(erased: Node, to: Node) -> None:
    """An erased node is replaced by another node. SRT-9."""
    if erased is to:
        raise FxOracleError(f"SRT-9: cannot redirect {erased.name} to itself")
