"""torch 2.13's side of the differential harness (fxoracle issues 2 and 3; test infrastructure,
no spec chapter of its own: it observes torch, whose behaviour the other chapters cite).

Runs torch's own region finding (`GraphRegionTracker.get_identical_regions`) and graph
deduplication (`apply_graph_deduplication`) on a model file of `tests/corpus/`, and reports the
results as plain data (node names, tensors) that the reference side can be compared with;
`tests/torch_side_summary.py` summarizes the deduplicated graphs structurally. This module
is a torch adapter: `Any` appears only where torch objects cross its edge.

A model file defines `model` (an `nn.Module` or a function) and `example_inputs` (a tuple of
tensors), optionally `dynamic = True` and `device = "cuda"` (fake CUDA inputs: captured, never
run eagerly); corpus files also define `scenario`, `description`, `torch_wrong` and
`tracking_only` (see `tests/corpus/README.md`). A file is loaded afresh for every capture or
run, so in-place updates of its inputs never leak from one run into the next.
"""

from __future__ import annotations

import logging
import runpy
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import torch
import torch.fx
from torch._dynamo.graph_region_tracker import GraphRegionTracker
from torch._dynamo.symbolic_convert import InstructionTranslator
from torch.utils._pytree import tree_leaves

from reference.errors import FxOracleError

CORPUS_DIR = Path(__file__).parent / "corpus"

# Region finding only: nodes are tracked, the graph is left alone.
TRACK_FLAGS: Mapping[str, bool] = MappingProxyType({"track_nodes_for_deduplication": True})
# Deduplication as the backend sees it, every invoke_subgraph kept (none inlined).
DEDUP_FLAGS: Mapping[str, bool] = MappingProxyType(
    {"use_graph_deduplication": True, "inline_single_use_invoke_subgraph": False}
)

_DEDUP_LOGGER = "torch._dynamo.graph_deduplication"


@dataclass(frozen=True, slots=True, eq=False)
class ModelFile:
    """A loaded model file: what to run and, for corpus files, what it is about."""

    path: Path
    model: Callable[..., Any]
    example_inputs: tuple[torch.Tensor, ...]
    dynamic: bool
    device: str  # "cpu", or "cuda" for fake CUDA inputs that can be captured but not run
    scenario: str  # "T1", "D5", "B1", "own", or "" outside the corpus
    description: str
    torch_wrong: str | None  # the bug id when torch 2.13 gets this file wrong
    tracking_only: bool


def load_model_file(path: str | Path) -> ModelFile:
    """Run the file at `path` and read its model attributes; `FxOracleError` if one is bad."""
    path = Path(path)
    namespace = runpy.run_path(str(path))
    model = namespace.get("model")
    inputs = namespace.get("example_inputs")
    if not callable(model):
        raise FxOracleError(f"{path}: `model` must be an nn.Module or a function")
    if not isinstance(inputs, tuple) or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise FxOracleError(f"{path}: `example_inputs` must be a tuple of tensors")
    wrong = namespace.get("torch_wrong")
    return ModelFile(
        path=path,
        model=cast(Callable[..., Any], model),
        example_inputs=cast(tuple[torch.Tensor, ...], inputs),
        dynamic=bool(namespace.get("dynamic", False)),
        device=str(namespace.get("device", "cpu")),
        scenario=str(namespace.get("scenario", "")),
        description=str(namespace.get("description", "")),
        torch_wrong=None if wrong is None else str(wrong),
        tracking_only=bool(namespace.get("tracking_only", False)),
    )


def corpus_files() -> list[Path]:
    """Every model file of the corpus, sorted by name."""
    return sorted(CORPUS_DIR.glob("*.py"))


@dataclass(frozen=True, slots=True)
class Capture:
    """What one `torch.compile` call handed to its backend, and what it returned."""

    graph_module: torch.fx.GraphModule
    tracker: GraphRegionTracker
    outputs: tuple[torch.Tensor, ...]


class _RecordingBackend:
    """A Dynamo backend that keeps the graph module and the region tracker, and runs the graph
    as it is (the eager backend)."""

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []
        self.trackers: list[GraphRegionTracker] = []

    def __call__(
        self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any]
    ) -> torch.fx.GraphModule:
        self.graphs.append(gm)
        self.trackers.append(InstructionTranslator.current_tx().output.region_tracker)
        return gm


def capture(model_file: ModelFile, flags: Mapping[str, bool]) -> Capture:
    """Compile and run `model_file` once (fullgraph) under the Dynamo config `flags`."""
    torch._dynamo.reset()
    backend = _RecordingBackend()
    with torch._dynamo.config.patch(dict(flags)):
        compiled = torch.compile(
            model_file.model, backend=backend, fullgraph=True, dynamic=model_file.dynamic
        )
        outputs = compiled(*model_file.example_inputs)
    assert len(backend.graphs) == 1, f"torch_side: expected one graph, got {len(backend.graphs)}"
    return Capture(backend.graphs[0], backend.trackers[0], _tensor_leaves(outputs))


def _tensor_leaves(value: object) -> tuple[torch.Tensor, ...]:
    return tuple(leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor))


def torch_region_groups(path: str | Path) -> list[list[list[str]]]:
    """torch's `get_identical_regions` on the captured graph, as node names:
    (groups, regions, nodes)."""
    result = capture(load_model_file(path), TRACK_FLAGS)
    groups = result.tracker.get_identical_regions(result.graph_module.graph)
    return [[[node.name for node in region] for region in group] for group in groups]


def torch_mutations(path: str | Path) -> dict[str, list[int]]:
    """The tracker's `node_to_mutated_arg_positions`: node name -> mutated flat arg positions."""
    result = capture(load_model_file(path), TRACK_FLAGS)
    positions = result.tracker.node_to_mutated_arg_positions
    return {node.name: list(found) for node, found in positions.items()}


def torch_dedup_graph(path: str | Path) -> torch.fx.GraphModule:
    """The graph module the backend receives with `apply_graph_deduplication` on and no
    invoke_subgraph inlined."""
    return capture(load_model_file(path), DEDUP_FLAGS).graph_module


@contextmanager
def dedup_refusals() -> Iterator[list[str]]:
    """Collect torch's "NYI: Failed to substitute region ..." messages (mutation or aliasing
    refusals) logged while the block runs."""
    messages: list[str] = []
    handler = _ListHandler(messages)
    logger = logging.getLogger(_DEDUP_LOGGER)
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    # DEBUG for our handler only: torch's own handlers upstream would print every message
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("NYI"):
            self.sink.append(message)


def eager_and_compiled(
    path: str | Path, dedup: bool
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """The model's tensor outputs followed by its inputs after the call (so that in-place
    updates count), run eagerly and compiled (with or without deduplication). Each run loads
    the file afresh."""
    eager_file = load_model_file(path)
    if eager_file.device != "cpu":
        raise FxOracleError(f"{path}: fake {eager_file.device} inputs cannot be run")
    eager = _tensor_leaves(eager_file.model(*eager_file.example_inputs))
    compiled_file = load_model_file(path)
    result = capture(compiled_file, DEDUP_FLAGS if dedup else MappingProxyType({}))
    return (
        eager + eager_file.example_inputs,
        result.outputs + compiled_file.example_inputs,
    )
