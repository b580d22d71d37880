"""The example plug-in's twins, each with a planted bug the oracle must catch and blame on it
(spec chapter 08, DIF-1; chapter 09 for the three aliasing bugs; DIF-27 `WritesInputs`, DIF-29
`ReordersDraws`), `Planted` with three at once, and a splitter with one (`LazyPlaceholders`,
DIF-28). `fxoracle bench` times how long `diff --random` takes to blame each of the nine:

    fxoracle diff tests/corpus/*.py --against checker.oracle.plugins.planted:Planted
    fxoracle fuzz --against checker.oracle.plugins.planted:IgnoresViews --minutes 5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
import torch.fx

from checker.oracle.plugins.example import RANDOM, Example, named
from checker.oracle.plugins.regions import Region
from checker.oracle.plugins.subgraphs import Deps, outputs_of
from checker.oracle.protocol import Callback, CapturedGraph
from reference.split import split_module

Node = torch.fx.Node


class MergesConstants(Example):
    """Nodes are bucketed by target alone, so calls with different float constants merge
    (torch's B1): blamed in `tracker`."""

    def buckets(self, graph: CapturedGraph) -> list[tuple[Node, ...]]:
        by_target: dict[str, list[Node]] = {}
        for bucket in graph.tracker.buckets().groups:
            for node in bucket:
                by_target.setdefault(f"{node.op}:{node.target}", []).append(node)
        return [tuple(b) for b in by_target.values()]


class DropsWrites(Example):
    """The ordering dependencies leave out every write: blamed in `dedup`."""

    def ordering_deps(self, graph: torch.fx.Graph, writes: Mapping[Node, list[Node]]) -> Deps:
        return super().ordering_deps(graph, {})


class SortIgnoresDeps(Example):
    """The sort ignores every extra dependency: blamed in `sort`."""

    def deps_of(self, deps: Mapping[Node, Sequence[Node]], node: Node) -> Sequence[Node]:
        return ()


class Planted(MergesConstants, DropsWrites, SortIgnoresDeps):
    """The three bugs above at once, one per component the example implements."""


class IgnoresViews(Example):
    """A write is ordered against the direct users of what it writes only (torch's rule, N9):
    a read of a view of it may cross it."""

    def readers(self, graph: torch.fx.Graph, written: Sequence[Node]) -> list[Node]:
        return [u for w in written for u in w.users]


class SkipsAliasing(Example):
    """Operands and outputs that share storage are outlined anyway (RPL-8 left out): torch's
    runtime assumes they do not (CHK-18)."""

    def aliasing(self, region: Region) -> str:
        return ""


class OutputsPerRegion(Example):
    """Each call returns what its own region's outside users need, but the subgraph is region
    0's: where the regions' outside users differ, a getitem takes the wrong output."""

    def outputs(self, regions: Sequence[Region]) -> list[int]:
        return outputs_of(regions[0])


class WritesInputs(Example):
    """A region that writes in place is outlined anyway: with a key that forgets which version
    of a value a node reads, the two `h.view(-1).mul_(2)` of `tests/corpus/a5_*.py` are one
    group, and each becomes a call whose body writes a view of its own input. Inlined, the
    calls mean what the original means; torch's runtime forbids the write (CHK-15)."""

    def buckets(self, graph: CapturedGraph) -> list[tuple[Node, ...]]:
        merged: dict[str, list[Node]] = {}
        for bucket in graph.tracker.buckets().groups:
            for node in bucket:
                merged.setdefault(_shape_free_key(node), []).append(node)
        return [tuple(b) for b in merged.values()]

    def effect(self, node: Node, writes: Mapping[Node, list[Node]]) -> bool:
        return super().effect(node, {})


def _shape_free_key(node: Node) -> str:
    """The node's op, target, constant arguments (node arguments as `%`) and the dtype and
    shape of its value and its node arguments' values: not which version of them it reads."""
    consts = torch.fx.map_arg((node.args, node.kwargs), lambda _: "%")
    metas = [_meta(n) for n in (node, *node.all_input_nodes)]
    return f"{node.op}:{node.target}:{consts}:{metas}"


def _meta(node: Node) -> str:
    value = node.meta.get("example_value")
    if isinstance(value, torch.Tensor):
        return f"{value.dtype}{tuple(value.shape)}{value.requires_grad}"
    return type(value).__name__


class EditedSplit:
    """The reference's split (`reference.split.split_module`) with one edit of the result:
    the base of planted splitters."""

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        split = split_module(gm, None, callback, keep_original_order=keep_original_order,
                             partition_affix=partition_affix)  # fmt: skip
        self.edit(split, keep_original_order)
        split.recompile()
        return split

    def edit(self, split: torch.fx.GraphModule, keep_original_order: bool) -> None:
        raise NotImplementedError


class LazyPlaceholders(EditedSplit):
    """The root's placeholders made lazily under `keep_original_order`: each when a partition
    first uses it, so the split's signature is in order of first use. With dynamic shapes a
    size symbol and a tensor trade places (`relu(): argument 'input' must be Tensor, not
    SymInt`)."""

    def edit(self, split: torch.fx.GraphModule, keep_original_order: bool) -> None:
        if keep_original_order:
            _placeholders_in_use_order(split.graph)


def _placeholders_in_use_order(graph: torch.fx.Graph) -> None:
    """The placeholders moved into the order the partitions' calls first pass them in (unused
    ones last)."""
    uses: dict[Node, int] = {}
    for node in graph.nodes:
        for arg in node.all_input_nodes:
            uses.setdefault(arg, len(uses))
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    lazy = sorted(placeholders, key=lambda p: uses.get(p, len(uses)))
    first = next(n for n in graph.nodes if n.op != "placeholder")
    for placeholder in lazy:
        first.prepend(placeholder)


class ReordersDraws(Example):
    """Draws are ordered like any other node: no order between them, and the sort defers a
    draw while anything else is ready, then takes the latest ready draw first, so two
    independent draws swap and return each other's numbers (EFF-4)."""

    def draw_order(self, graph: torch.fx.Graph) -> list[tuple[Node, Node]]:
        return []

    def rank(self, node: Node, position: int) -> int:
        return LAST - position if named(node, RANDOM) else position


LAST = 1 << 30  # a rank after every node's position
