"""The plug-in contract: what an implementation under test provides, and what it is given (spec
chapter 08, DIF-1). Import from here: `from checker.oracle.protocol import DedupOutput, ...`.

An implementation is any object with one or more of four methods, one per component:

  find_regions(graph: CapturedGraph) -> region groups           (component `tracker`)
  deduplicate(graph: CapturedGraph)  -> DedupOutput             (component `dedup`)
  stable_sort(graph: fx.Graph, deps) -> None, reorders in place (component `sort`)
  split(gm, callback, keep_original_order, partition_affix) -> GraphModule  (`split`)

fxoracle captures every model once (Dynamo, fullgraph, deduplication on, the pass replaced by a
recorder: `reference.dynamo.capture.capture`), so a plug-in never captures anything itself. Each
call gets its OWN copy: a method may edit what it is given (a pass edits the graph in place, as
torch's does) and nothing it does reaches the other side. What each method receives, returns and may
change is in its Protocol's docstring; `checker/oracle/plugins/` holds a runnable example.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch
import torch.fx

from reference.dynamo.capture import Capture

Node = torch.fx.Node
CapturedGraph = Capture  # gm, tracker, example_inputs, dynamic, torch_tracker (see below)
RegionGroups = tuple[tuple[tuple[str, ...], ...], ...]  # groups, regions, node names
Buckets = tuple[tuple[str, ...], ...]  # a tracker's buckets of key-equal nodes (2 or more)
Callback = Callable[[Node], int]


@dataclass(frozen=True, slots=True, eq=False)
class DedupOutput:
    """What `deduplicate` returns.

    - `transformed`: the graph module after the pass: the `graph.gm` it was given, edited in
      place, or a new module. It must compute what `graph.gm` computes on
      `graph.example_inputs`; its `invoke_subgraph` calls are judged as torch's runtime runs
      them.
    - `groups`: the region groups the pass outlined, as node names of `graph.gm` (`()`: not
      said; a name that is no node of `graph.gm` breaks the contract, DIF-12). Optional; a
      region finder reports them through `find_regions`.
    - `extra_deps`: `node -> nodes it must follow`, nodes of `transformed`, if the pass keeps
      ordering dependencies (torch's `_populate_additional_deps`); they join the acyclicity
      check. `None`: not known.
    - `buckets`: the pass's buckets of key-equal nodes (two or more, node names), if it says.
    - `refusals`: one line per region the pass left alone, and why, if it says.
    """

    transformed: torch.fx.GraphModule
    groups: RegionGroups = ()
    extra_deps: Mapping[Node, Sequence[Node]] | None = None
    buckets: Buckets = ()
    refusals: tuple[str, ...] = ()


@runtime_checkable
class FindsRegions(Protocol):
    def find_regions(self, graph: CapturedGraph) -> RegionGroups:
        """Region groups of `graph.gm`: groups, each a sequence of regions, each a sequence of
        node names (or nodes) of `graph.gm`; corresponding positions must be key-equal. A name
        that is no node of `graph.gm` breaks the contract (DIF-12).

        Receives a copy: `graph.gm` as torch's pass would see it; `graph.tracker`, fxoracle's
        keys of its nodes (`graph.tracker.buckets()`); `graph.example_inputs`. A finder with its
        own key reads node metadata (`example_value`, `stack_trace`). Order: torch's (latest
        group first, region 0 in graph order); groups are compared as given.
        """
        ...


@runtime_checkable
class Deduplicates(Protocol):
    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        """Outline identical regions of `graph.gm` into `invoke_subgraph` calls.

        Receives a copy (see `FindsRegions`) and may edit `graph.gm` in place: add nodes,
        erase the regions it replaces, register subgraph modules, reorder. It must not change
        what the graph computes, nor mutate a graph input inside a subgraph (torch's runtime
        rejects that, CHK-15).
        """
        ...


@runtime_checkable
class Sorts(Protocol):
    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        """Reorder `graph` in place into a topological order that also puts every node after
        `deps[node]` (nodes of `graph`), moving as little as it can (SRT-1..SRT-5).

        May only move nodes: adding or erasing one is a contract violation. Receives a
        scrambled copy of the captured graph and torch's ordering deps for it.
        """
        ...


@runtime_checkable
class Splits(Protocol):
    def split(
        self,
        gm: torch.fx.GraphModule,
        callback: Callback,
        keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:
        """`torch.fx.passes.split_module.split_module(gm, None, callback,
        keep_original_order=..., partition_affix=...)`: a module whose `submod_<i>` children
        compute `gm` partition by partition. Receives a copy of the captured graph; raising
        (any exception) means "refused": it agrees with a refusing reference, and where the
        reference splits, its split is judged: right, the refusal is a `refusal` of a valid case
        blamed on the plug-in; wrong, the reference is blamed (DIF-30). `NotImplementedError`
        means "this case is outside what I support" and skips it.
        """
        ...


PARTS: tuple[tuple[str, type], ...] = (
    ("tracker", FindsRegions), ("dedup", Deduplicates), ("sort", Sorts), ("split", Splits),
)  # fmt: skip


def parts_of(impl: object) -> tuple[str, ...]:
    """The components `impl` implements, in `PARTS` order (DIF-1)."""
    return tuple(name for name, proto in PARTS if isinstance(impl, proto))
