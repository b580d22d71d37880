"""fxoracle inside Dynamo: torch's deduplication pass contract with the reference behind it
(spec chapter 03, RPL-19).

- `apply_graph_deduplication(output_graph)` has torch's signature and contract: it reads
  `output_graph.region_tracker` and `output_graph.graph`, edits the graph in place, installs
  each subgraph through `output_graph.install_subgraph("subgraph", sub_gm)` (which chooses the
  name) and returns `{name: subgraph}`. It never wraps the live graph in a module, so
  `graph.owning_module` stays what it was.
- `deduplicate_output_graph(output_graph)` is the same pass returning the whole `DedupResult`
  (refusals and the ordering dependencies included); `additional_deps(...)` gives the ordering
  dependencies in torch's format (`{node: OrderedSet[node]}`, as torch's
  `_populate_additional_deps` and `last_node_to_additional_deps`).
- `use_reference()` substitutes both fxoracle's tracker and this pass into `torch.compile`.
- `ModuleOutputGraph(gm, tracker)` is an output graph over a plain graph module, to run a pass
  with this contract (torch's or ours) outside Dynamo; it names subgraphs as Dynamo does.
- `torch_form(gm)` prints a module the reference deduplicated as torch's pass leaves it (no
  type metadata on subgraph placeholders), for tests that compare printed graphs.

When the output graph's tracker is not fxoracle's (Dynamo ran with torch's), the graph is keyed
offline from node metadata (`track_graph`, TRK-10).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch
import torch.fx
from torch.utils._ordered_set import OrderedSet

from reference.dynamo.capture import dynamo_pass, dynamo_tracker
from reference.effects.observed_writes import graph_writes
from reference.expand.regions import search_regions
from reference.fast.keys import track_graph_fast
from reference.graph_copy import copy_graph_module
from reference.names import INVOKE
from reference.pipeline import outline
from reference.policy import RIGHT, TORCH, Policy
from reference.replace.outliner import DedupResult
from reference.sort.deps import ordering_deps
from reference.track.tracker import GraphRegionTracker

Node = torch.fx.Node


class _OutputGraphInstaller:
    """Subgraphs go through the output graph's `install_subgraph`, which chooses the name."""

    def __init__(self, output_graph: Any) -> None:
        self._out = output_graph

    @property
    def root(self) -> dict[str, Any]:
        return dict(self._out.nn_modules)

    def install(self, sub_gm: torch.fx.GraphModule) -> str:
        name = self._out.install_subgraph("subgraph", sub_gm)
        assert isinstance(name, str), "RPL-19: install_subgraph returns the name it chose"
        return name


def deduplicate_output_graph(output_graph: Any, *, policy: Policy = RIGHT) -> DedupResult:
    """The reference pass on a Dynamo output graph (or anything with `graph`, `region_tracker`,
    `nn_modules` and `install_subgraph`), in place (RPL-19)."""
    graph = output_graph.graph
    tracker = output_graph.region_tracker
    if not isinstance(tracker, GraphRegionTracker):
        tracker = track_graph_fast(graph)  # torch's tracker: keys from the metadata (TRK-13)
    groups = search_regions(graph, tracker.buckets()).region_groups()
    writes = graph_writes(graph, tracker.node_to_mutated_arg_positions)  # EFF-9
    return outline(graph, _OutputGraphInstaller(output_graph), groups, writes, policy=policy)


def apply_graph_deduplication(output_graph: Any) -> dict[str, torch.fx.GraphModule]:
    """torch's `apply_graph_deduplication` contract, the reference behind it (RPL-19)."""
    return dict(deduplicate_output_graph(output_graph).subgraphs)


def additional_deps(
    graph: torch.fx.Graph, writes: Mapping[Node, Iterable[int]], *, policy: Policy = TORCH
) -> dict[Node, OrderedSet[Node]]:
    """The extra ordering dependencies of `graph` in torch's format; with the default policy
    (torch's rules) they equal torch's `_populate_additional_deps` (SRT-6..SRT-13)."""
    return torch_format(ordering_deps(graph, writes, policy).as_mapping())


def torch_format(deps: Mapping[Node, Sequence[Node]]) -> dict[Node, OrderedSet[Node]]:
    """`{node: nodes it must follow}` as torch keeps it: ordered sets, no empty entries."""
    return {n: OrderedSet(d) for n, d in deps.items() if d}


@contextmanager
def use_reference() -> Iterator[None]:
    """Inside this block `torch.compile` keys nodes with fxoracle's tracker and deduplicates
    with fxoracle's pass (deduplication on). Run Dynamo's own tests with the reference so."""
    with dynamo_tracker(), dynamo_pass(apply_graph_deduplication):
        yield


def torch_form(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of a module deduplicated by the reference, printed as torch's pass would leave
    it: torch gives subgraph placeholders no `example_value` and subgraph nodes no `val`
    (which `print_readable` shows as types), nor the call itself an example value; fxoracle
    sets them (CHK-5 reads the first, torch's runtime the second, RPL-22, the alias DB the
    third, EFF-7). The computation is the same."""
    copy = copy_graph_module(gm).gm
    for node in copy.graph.nodes:
        if node.target is INVOKE:
            node.meta.pop("example_value", None)
    for name, child in copy.named_children():
        if isinstance(child, torch.fx.GraphModule) and name.startswith("subgraph"):
            for node in child.graph.nodes:
                node.meta.pop("val", None)
                if node.op == "placeholder":
                    node.meta.pop("example_value", None)
    return copy


class ModuleOutputGraph:
    """An output graph over a graph module: `graph`, `region_tracker` (any tracker),
    `nn_modules` and `install_subgraph` with Dynamo's naming (`subgraph_0`, `subgraph_1`, ...,
    skipping names the module already has)."""

    def __init__(self, gm: torch.fx.GraphModule, region_tracker: Any) -> None:
        self.gm = gm
        self.graph = gm.graph
        self.region_tracker = region_tracker
        self.nn_modules: dict[str, Any] = dict(gm.named_children())

    def install_subgraph(self, name: str, sub_gm: torch.fx.GraphModule) -> str:
        chosen = next(f"{name}_{i}" for i in itertools.count() if not self._has(f"{name}_{i}"))
        self.gm.register_module(chosen, sub_gm)
        self.nn_modules[chosen] = sub_gm
        return chosen

    def _has(self, name: str) -> bool:
        return name in self.nn_modules or hasattr(self.gm, name)
