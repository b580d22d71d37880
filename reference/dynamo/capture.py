"""Capture: the graph torch's deduplication pass would receive, keyed by fxoracle's tracker
(spec chapter 01, TRK-9).

`dynamo_tracker()` is the one documented hook into Dynamo: inside it, every `OutputGraph`
Dynamo creates gets a `reference.GraphRegionTracker` instead of torch's and node tracking is on.
`capture(model, example_inputs)` compiles with fullgraph=True and deduplication ON, with torch's
pass replaced by a recorder: so the graph is exactly the one torch's pass would see (Dynamo's
cleanups after the pass, such as dropping unused `size()` calls, have not run yet), keyed live,
with the graph's own inputs (parameters and buffers included) as they were before the model ran.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from unittest import mock

import torch
import torch._dynamo
import torch.fx
from torch.utils._ordered_set import OrderedSet

from reference.effects.node_effects import UNKNOWN_META, WRITES_META
from reference.effects.observed_writes import node_writes
from reference.errors import FxOracleError, describe_with_cause
from reference.graph_copy import copy_graph, copy_graph_module
from reference.track.keys import ORIGIN_META
from reference.track.tracker import GraphRegionTracker

Node = torch.fx.Node
Pass = Callable[[Any], dict[str, torch.fx.GraphModule]]  # torch's `apply_graph_deduplication`
T = TypeVar("T")  # a tracker: fxoracle's or torch's


@dataclass(frozen=True, slots=True, eq=False)
class Capture:
    """A captured graph, the tracker that keyed it, and its inputs.

    `gm` is the graph as torch's deduplication pass receives it, `tracker` our keys of its nodes,
    `example_inputs` one value per placeholder (parameters and buffers included), taken before
    the model ran. `torch_tracker`, when asked for, is torch's own tracker of the same capture:
    only the differential oracle's `torch` side reads it (`checker.oracle.protocol.CapturedGraph`
    is what a plug-in may read).
    """

    gm: torch.fx.GraphModule
    tracker: GraphRegionTracker
    example_inputs: tuple[Any, ...]
    dynamic: bool = False
    torch_tracker: Any = None

    def copy(self) -> Capture:
        """An independent copy: the graph copied, both trackers moved onto the copy's nodes,
        the inputs cloned. Passes edit the copy in place; this capture stays as it was."""
        found = copy_graph_module(self.gm)
        theirs = None
        if self.torch_tracker is not None:
            theirs = remapped(self.torch_tracker, found.nodes, type(self.torch_tracker)())
        ours = remapped(self.tracker, found.nodes, GraphRegionTracker())
        return Capture(found.gm, ours, fresh_inputs(self.example_inputs), self.dynamic, theirs)


class _Tee(GraphRegionTracker):
    """fxoracle's tracker that feeds torch's own as well, so one capture yields both keys."""

    def __init__(self) -> None:
        from torch._dynamo.graph_region_tracker import GraphRegionTracker as TorchTracker

        super().__init__()
        self.torch = TorchTracker()

    def track_node(self, tx: Any, node: Node) -> None:
        super().track_node(tx, node)
        self.torch.track_node(tx, node)

    def track_node_mutations(
        self, node: Node, flat_args_kwargs: list[Any], id_to_initial_version: Mapping[int, int]
    ) -> None:
        super().track_node_mutations(node, flat_args_kwargs, id_to_initial_version)
        self.torch.track_node_mutations(node, flat_args_kwargs, dict(id_to_initial_version))

    def add_node_mutation(self, node: Node, arg_pos: int) -> None:
        super().add_node_mutation(node, arg_pos)
        self.torch.add_node_mutation(node, arg_pos)


@contextmanager
def dynamo_tracker(
    tracker: Callable[[], GraphRegionTracker] = GraphRegionTracker,
) -> Iterator[None]:
    """Make Dynamo track nodes with `tracker()` (by default `reference.GraphRegionTracker`)
    instead of torch's, tracking on (TRK-9)."""
    import torch._dynamo.output_graph as output_graph

    with (
        torch._dynamo.config.patch(track_nodes_for_deduplication=True),
        mock.patch.object(output_graph, "GraphRegionTracker", tracker),
    ):
        yield


@contextmanager
def dynamo_pass(run: Pass) -> Iterator[None]:
    """Deduplication on, and Dynamo's call of `apply_graph_deduplication(output_graph)`
    replaced by `run(output_graph)` (which returns `{name: installed subgraph}`)."""
    import torch._dynamo.output_graph as output_graph

    with (
        torch._dynamo.config.patch(use_graph_deduplication=True),
        mock.patch.object(output_graph, "apply_graph_deduplication", run),
    ):
        yield


def capture(
    model: Callable[..., Any],
    example_inputs: tuple[Any, ...],
    dynamic: bool = False,
    *,
    with_torch_tracker: bool = False,
) -> Capture:
    """Capture `model` on `example_inputs` through Dynamo (fullgraph), taking the graph where
    torch's deduplication pass would run. `with_torch_tracker` also keys it with torch's own
    tracker (the differential oracle's torch side). Raises `FxOracleError` on a graph break, an
    exception in the model, or a graph without calls (Dynamo runs no pass then)."""
    seen: list[Capture] = []
    shape_envs: list[Any] = []

    def record(out: Any) -> dict[str, torch.fx.GraphModule]:
        seen.append(_recorded(out, dynamic))
        shape_envs.append(out.shape_env)
        return {}

    torch._dynamo.reset()
    try:
        with (
            dynamo_tracker(_Tee if with_torch_tracker else GraphRegionTracker),
            dynamo_pass(record),
        ):
            compiled = torch.compile(model, backend=_run_as_is, fullgraph=True, dynamic=dynamic)
            compiled(*fresh_inputs(example_inputs))
    except Exception as e:  # the user's model or Dynamo failed: bad input, one line
        raise FxOracleError(f"capture failed: {describe_with_cause(e)}") from e
    finally:
        torch._dynamo.reset()
        untrack_fakes(shape_envs)
    if len(seen) != 1:
        raise FxOracleError(f"capture produced {len(seen)} graphs with calls, expected exactly one")
    return seen[0]


def untrack_fakes(shape_envs: list[Any]) -> None:
    """Empty each `ShapeEnv`'s `tracked_fakes` and its fake-tensor dispatch cache once Dynamo is
    done with them (its guards are built). A symbolic fake tensor holds its `ShapeEnv` through
    C++ (the SymInts of its sizes), which Python's collector cannot see, and the `ShapeEnv`
    holds such tensors in both: the cycle would keep every dynamic-shape capture alive for the
    rest of the process."""
    for env in shape_envs:
        for held in (getattr(env, "tracked_fakes", None), getattr(env, "fake_tensor_cache", None)):
            if isinstance(held, (list, dict)):
                held.clear()


def _run_as_is(gm: torch.fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
    return gm.forward


CAPTURE_MODULE = "DynamoCaptureModule"  # the class name of a capture's graph module


def _recorded(out: Any, dynamic: bool) -> Capture:
    """A copy of the output graph's graph and trackers, and its inputs (TRK-9)."""
    tracker = out.region_tracker
    assert isinstance(tracker, GraphRegionTracker), "TRK-9: our tracker is installed"
    # named apart from the plug-in contract's `CapturedGraph`, which holds it as `gm`
    found = copy_graph(out.graph, dict(out.nn_modules), CAPTURE_MODULE)
    inputs = tuple(
        snapshot(p.meta["grapharg"].example) for p in out.graph.find_nodes(op="placeholder")
    )
    theirs = None
    if isinstance(tracker, _Tee):
        theirs = remapped(tracker.torch, found.nodes, type(tracker.torch)())
    ours = remapped(tracker, found.nodes, GraphRegionTracker())
    record_writes(found.gm.graph, ours.node_to_mutated_arg_positions)
    for node in found.gm.graph.nodes:  # what running it showed, for the pass too (EFF-9)
        for position in node.meta.get(WRITES_META, ()):
            ours.add_node_mutation(node, position)
    record_origins(found.gm.graph, ours)
    return Capture(found.gm, ours, inputs, dynamic, theirs)


def record_writes(graph: torch.fx.Graph, seen: Mapping[Node, Iterable[int]]) -> None:
    """Store on every call node the positions it writes, none included, so that the graph tells
    its own writes to every later reader (EFF-1): what the version counters saw (`seen`) and
    what running it on fakes showed (EFF-9), and whether that was unknown."""
    for node in graph.nodes:
        if node.op.startswith("call_"):
            positions, unknown = node_writes(node, tuple(seen.get(node, ())))
            node.meta[WRITES_META] = positions
            if unknown:
                node.meta[UNKNOWN_META] = True


def record_origins(graph: torch.fx.Graph, tracker: GraphRegionTracker) -> None:
    """Store on every keyed node where it was created and the global state it was keyed under
    (`keys.Origin`), so that a pass with its own key can read them from the graph (TRK-2)."""
    for node in graph.nodes:
        origin = tracker.origin(node)
        if origin is not None:
            node.meta[ORIGIN_META] = origin


def remapped(tracker: Any, nodes: Mapping[Node, Node], copy: T) -> T:
    """`copy`, an empty tracker, filled with `tracker` (torch's or ours) moved onto a copy of its
    graph (`nodes[old]` is the copy of `old`; nodes not in `nodes` are dropped): buckets,
    `node_to_duplicates` (edits included), mutated positions, and ours' keys and untracked nodes."""
    dst: Any = copy
    for key, bucket in tracker.hash_to_duplicates.items():
        moved = dst.hash_to_duplicates[key] = [nodes[n] for n in bucket if n in nodes]
        for old, new in zip((n for n in bucket if n in nodes), moved, strict=True):
            if tracker.node_to_duplicates.get(old) is bucket:
                dst.node_to_duplicates[new] = moved
    for old, positions in tracker.node_to_mutated_arg_positions.items():
        if old in nodes:
            dst.node_to_mutated_arg_positions[nodes[old]] = OrderedSet(positions)
    if isinstance(tracker, GraphRegionTracker):
        dst.node_to_key = {nodes[n]: k for n, k in tracker.node_to_key.items() if n in nodes}
        dst.untracked = {nodes[n]: why for n, why in tracker.untracked.items() if n in nodes}
    return copy


def snapshot(value: Any) -> Any:
    """A copy of a graph input taken before the graph runs (the model may mutate its inputs)."""
    if isinstance(value, torch.Tensor) and not value.is_meta:
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def fresh_inputs(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Copies of `inputs` for one more run, so runs never see each other's mutations."""
    return tuple(snapshot(x) for x in inputs)
