"""The built-in implementations under test (spec chapter 08, DIF-1, DIF-2).

Built in: `reference` (fxoracle's pipeline), `torch` (torch's tracker, `apply_graph_deduplication`,
`_stable_topological_sort` and `split_module`, through `checker.oracle.sides.torch_side`) and
`torch-simple` (`split_module_simple`). A user's implementation is loaded by
`checker.oracle.sides.loading`; the contract it must follow is `checker.oracle.protocol`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import torch
import torch.fx

from checker.oracle.protocol import Callback, CapturedGraph, DedupOutput, RegionGroups
from checker.oracle.sides.cases import PARTITIONED
from checker.oracle.sides.torch_side import torch_dedup, torch_regions
from reference.errors import FxOracleError
from reference.expand.regions import search_regions
from reference.pipeline import deduplicate
from reference.policy import RIGHT, Policy
from reference.sort.stable import stable_topological_sort
from reference.split import split_module
from reference.torch_version import TORCH

Node = torch.fx.Node


@dataclass(frozen=True, slots=True, eq=False)
class ReferenceOutput(DedupOutput):
    """The reference pass's output, with the invariant of each refusal (`RPL-8`), in the order
    of `refusals`."""

    refused: tuple[str, ...] = ()
    taken_over: bool = False  # a call passes a getitem an earlier call took over (RPL-17)


class ReferenceImpl:
    """fxoracle's reference pipeline, every part."""

    label = "reference"

    def find_regions(self, graph: CapturedGraph) -> RegionGroups:
        return search_regions(graph.gm.graph, graph.tracker.buckets()).group_names()

    def deduplicate(self, graph: CapturedGraph, policy: Policy = RIGHT) -> ReferenceOutput:
        """The reference pass; a `policy` other than the default reproduces some of torch's
        rules (`reference.policy`), for explaining a difference from torch's graph."""
        search = search_regions(graph.gm.graph, graph.tracker.buckets())
        done = deduplicate(graph.gm, graph.tracker, search=search, policy=policy)
        refusals = tuple(
            f"group {r.group} region {'*' if r.region is None else r.region}: {r.reason.value}"
            + (f" ({r.detail})" if r.detail else "")
            for r in done.refused
        )
        buckets = tuple(
            tuple(n.name for n in b) for b in graph.tracker.buckets().groups if len(b) > 1
        )
        refused = tuple(r.id for r in done.refused)
        taken = any(r.taken for r in done.replaced)
        return ReferenceOutput(graph.gm, search.group_names(), done.extra_deps, buckets, refusals,
                               refused, taken)  # fmt: skip

    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        stable_topological_sort(graph, deps)

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        return split_module(gm, None, callback, keep_original_order=keep_original_order,
                            partition_affix=partition_affix)  # fmt: skip


class TorchImpl:
    """torch's own tracker, pass, sort and splitter (the raw output of each, nothing inlined)."""

    label = "torch"

    def find_regions(self, graph: CapturedGraph) -> RegionGroups:
        return torch_regions(graph)

    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        return torch_dedup(graph)

    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        from torch._dynamo.graph_deduplication import _stable_topological_sort
        from torch.utils._ordered_set import OrderedSet

        _stable_topological_sort(graph, {n: OrderedSet(d) for n, d in deps.items()})

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        from torch.fx.passes.split_module import split_module as torch_split_module

        root = cast(torch.nn.Module, None)  # unused by torch, typed as a Module
        return torch_split_module(gm, root, callback, keep_original_order=keep_original_order,
                                  partition_affix=partition_affix)  # fmt: skip


class TorchSimpleImpl:
    """torch's `split_module_simple` within its documented preconditions (no get_attr, no
    grad-mode or autocast node, ids non-decreasing in node order). It runs partitions in
    first-appearance order, so only `keep_original_order=True` is compared. torch 2.11 and 2.12
    have no `split_module_simple`: the side is refused there (exit 2)."""

    label = "torch"

    def __init__(self) -> None:
        if not TORCH.split_module_simple:
            raise FxOracleError(
                f"--against torch-simple: {TORCH.label} has no split_module_simple (new in 2.13)"
            )

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        from torch.amp.autocast_mode import _enter_autocast, _exit_autocast
        from torch.fx.passes.split_module import split_module_simple

        calls = [n for n in gm.graph.nodes if n.op in PARTITIONED]
        ids = [callback(n) for n in calls]
        state = (torch._C._set_grad_enabled, _enter_autocast, _exit_autocast)
        if not keep_original_order or any(n.op == "get_attr" for n in gm.graph.nodes):
            raise NotImplementedError("split_module_simple: original order, no get_attr")
        if any(n.target in state for n in calls) or any(a > b for a, b in itertools.pairwise(ids)):
            raise NotImplementedError("split_module_simple: no global state, monotonic ids")
        return split_module_simple(gm, dict(zip(calls, ids, strict=True)),
                                   partition_affix=partition_affix)  # fmt: skip


BUILT_IN: Mapping[str, Callable[[], object]] = {
    "reference": ReferenceImpl, "torch": TorchImpl, "torch-simple": TorchSimpleImpl,
}  # fmt: skip


def uses_torch_tracker(impl: object) -> bool:
    """The side reads torch's own tracker, so the capture must key with it too."""
    return isinstance(impl, TorchImpl)
