"""What the graph-level parts of an implementation are run on (spec chapter 08, DIF-5).

The sort and the splitter take graphs, not model files: both sides get copies of one graph,
the reference's capture. `sort_input` scrambles a copy (`SCRAMBLES`: reversed, or a seeded
shuffle) and gives torch's ordering deps for it; a `SplitCase` is one split call, a partition
policy (`partition_ids`) with the order flag and the affix. `SPLIT_CASES` are always run,
`HOSTILE_SPLIT_CASES` only when asked for (`make_sides(..., hostile=True)`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
import torch.fx

from checker.oracle.protocol import Splits
from reference.errors import FxOracleError

Node = torch.fx.Node
PARTITIONED = ("call_function", "call_method", "call_module")
SCRAMBLES = ("reversed", "shuffle-1", "shuffle-2")


@dataclass(frozen=True, slots=True)
class SplitCase:
    """One split call: a partition policy (`partition_ids`), the order flag and the affix."""

    policy: str
    keep_original_order: bool
    affix: str | None = None

    def __str__(self) -> str:
        affix = f", partition_affix={self.affix!r}" if self.affix else ""
        return f"{self.policy}, keep_original_order={self.keep_original_order}{affix}"


SPLIT_CASES = (
    SplitCase("thirds", False), SplitCase("thirds", True), SplitCase("each", False),
    SplitCase("each", True), SplitCase("thirds", False, "p"),
)  # fmt: skip
HOSTILE_SPLIT_CASES = (
    SplitCase("reverse", False), SplitCase("inputs", True), SplitCase("inputs", False),
    SplitCase("each", True, "p"),
)  # fmt: skip


def parse_split_case(text: str) -> SplitCase:
    """The case of `SPLIT_CASES` or `HOSTILE_SPLIT_CASES` whose `str` is `text`."""
    return next(c for c in SPLIT_CASES + HOSTILE_SPLIT_CASES if str(c) == text)


def partition_ids(policy: str, gm: torch.fx.GraphModule) -> dict[Node, int]:
    """The partition of every partitioned node of `gm`: `thirds`, `each` (one node per
    partition), `reverse` (`each` backwards) or `inputs` (nodes whose earliest graph input
    comes later get lower ids, so appearance order is often not topological)."""
    calls = [n for n in gm.graph.nodes if n.op in PARTITIONED]
    n = len(calls)
    match policy:
        case "thirds":
            return {c: 3 * i // n for i, c in enumerate(calls)}
        case "each":
            return {c: i for i, c in enumerate(calls)}
        case "reverse":
            return {c: n - 1 - i for i, c in enumerate(calls)}
        case "inputs":
            inputs = [p for p in gm.graph.nodes if p.op == "placeholder"]
            first: dict[Node, int] = {p: i for i, p in enumerate(inputs)}
            for c in gm.graph.nodes:
                if c.op != "placeholder":
                    found = [first[a] for a in c.all_input_nodes if a in first]
                    first[c] = min(found, default=len(inputs))
            return {c: len(inputs) - first[c] for c in calls}
    raise FxOracleError(f"unknown split policy {policy!r}")


def split_with(side: Splits, gm: torch.fx.GraphModule, case: SplitCase) -> torch.fx.GraphModule:
    """`side.split` on its own copy of `gm` under `case`: a side may edit what it is given, and
    `gm` stays the original both splits are judged against (DIF-2)."""
    from reference.graph_copy import copy_graph_module

    mine = copy_graph_module(gm).gm
    ids = partition_ids(case.policy, mine)
    return side.split(mine, ids.__getitem__, case.keep_original_order, case.affix)


def sort_input(
    base: torch.fx.GraphModule, scramble: str
) -> tuple[torch.fx.GraphModule, dict[Node, tuple[Node, ...]]]:
    """A copy of `base` with its body scrambled (`reversed`, or a seeded shuffle), and torch's
    ordering deps for it (mutation order and autocast pins), computed before scrambling."""
    from reference.graph_copy import copy_graph_module
    from reference.policy import TORCH
    from reference.sort.deps import OrderingDeps

    gm = copy_graph_module(base).gm
    nodes = list(gm.graph.nodes)
    deps = OrderingDeps.from_graph(gm.graph, policy=TORCH).as_mapping()
    body, output = nodes[:-1], nodes[-1]
    if scramble == "reversed":
        body.reverse()
    else:
        random.Random(scramble).shuffle(body)
    for node in body:
        output.prepend(node)
    return gm, deps
