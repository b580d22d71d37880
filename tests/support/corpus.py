"""The differential corpus (`tests/corpus/`) and torch's side of it, through the oracle's own
torch side (`checker.oracle.sides.torch_side`): no test observes torch on its own.

A corpus file is a model file (`checker.io.model_file`) that also states what it is about:
`scenario`, `description`, `torch_wrong`, `torch_right_from`, `tracking_only` and `device` (see
`tests/corpus/README.md`); `load_model_file` reads those constants from the source without
running it twice. `torch_region_groups`, `torch_mutations`, `torch_dedup_graph` and
`torch_raw_dedup` run torch's tracker and pass on fxoracle's capture, as the oracle does;
`torch_compiled_graph`, `eager_and_compiled` and `dedup_refusals` observe `torch.compile` end to
end (what a user of torch sees). This module is a
torch adapter: `Any` appears only where torch objects cross its edge.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.fx
from torch.utils._pytree import tree_leaves

from checker.io.model_file import Model
from checker.io.model_file import load_model_file as load_model
from checker.oracle.campaign.randmodels import random_model
from checker.oracle.sides.torch_side import torch_dedup, torch_regions
from checker.proof.draws import seeded
from reference.dynamo.capture import Capture, capture
from reference.errors import FxOracleError
from tests.support.dedup_summary import DedupSummary, summarize_dedup
from tests.support.paths import CORPUS

CORPUS_DIR = CORPUS
_DEDUP_LOGGER = "torch._dynamo.graph_deduplication"


def keep_single_use() -> dict[str, bool]:
    """Dynamo's config that keeps a subgraph called once as a call (torch 2.13's
    `inline_single_use_invoke_subgraph=False`; 2.11 and 2.12 have no such flag and never
    inline one)."""
    flag = "inline_single_use_invoke_subgraph"
    return {flag: False} if hasattr(torch._dynamo.config, flag) else {}


@dataclass(frozen=True, slots=True, eq=False)
class CorpusFile:
    """A loaded model file and, for corpus files, what it is about."""

    path: Path
    loaded: Model
    device: str  # "cpu", or "cuda" for fake CUDA inputs that can be captured but not run
    scenario: str  # "T1", "D5", "B1", "own", or "" outside the corpus
    description: str
    torch_wrong: str | None  # the bug id when torch gets this file wrong
    tracking_only: bool
    torch_right_from: str | None = None  # the first release whose torch.compile gets it right

    @property
    def model(self) -> Callable[..., Any]:
        return self.loaded.model

    @property
    def example_inputs(self) -> tuple[Any, ...]:
        return self.loaded.example_inputs

    @property
    def dynamic(self) -> bool:
        return self.loaded.dynamic


def load_model_file(path: str | Path) -> CorpusFile:
    """Load the model file at `path` (afresh: its inputs are new tensors) and its metadata."""
    path = Path(path)
    loaded = load_model(path)
    meta = _constants(loaded.source)
    wrong, right = meta.get("torch_wrong"), meta.get("torch_right_from")
    return CorpusFile(path, loaded, str(meta.get("device", "cpu")),
                      str(meta.get("scenario", "")), str(meta.get("description", "")),
                      None if wrong is None else str(wrong),
                      bool(meta.get("tracking_only", False)),
                      None if right is None else str(right))  # fmt: skip


def _constants(source: str) -> dict[str, object]:
    """The module-level `name = constant` assignments of a source file."""
    found: dict[str, object] = {}
    for stmt in ast.parse(source).body:
        target: ast.expr | None = stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            found[target.id] = value.value
    return found


def corpus_files() -> list[Path]:
    """Every model file of the corpus, sorted by name."""
    return sorted(CORPUS_DIR.glob("*.py"))


def captured(path: str | Path) -> Capture:
    """fxoracle's capture of the file."""
    f = load_model_file(path)
    return capture(f.model, f.example_inputs, f.dynamic)


def random_captures(seed: int, count: int) -> Iterator[Capture]:
    """fxoracle's captures of the first `count` random models of the campaign with `seed`."""
    for index in range(count):
        m = random_model(seed, index)
        yield capture(m.model, m.example_inputs, m.dynamic)


def capture_with_torch(path: str | Path) -> Capture:
    """fxoracle's capture of the file, keyed by torch's tracker as well."""
    f = load_model_file(path)
    return capture(f.model, f.example_inputs, f.dynamic, with_torch_tracker=True)


def torch_region_groups(path: str | Path) -> list[list[list[str]]]:
    """torch's `get_identical_regions` on the captured graph, as node names."""
    return [[list(region) for region in group] for group in torch_regions(capture_with_torch(path))]


def torch_mutations(path: str | Path) -> dict[str, list[int]]:
    """torch's tracker's `node_to_mutated_arg_positions`: node name -> positions."""
    positions = capture_with_torch(path).torch_tracker.node_to_mutated_arg_positions
    return {node.name: list(found) for node, found in positions.items()}


def torch_dedup_graph(path: str | Path) -> torch.fx.GraphModule:
    """The graph right after torch's `apply_graph_deduplication`, on fxoracle's capture."""
    return torch_dedup(capture_with_torch(path).copy()).transformed


def torch_raw_dedup(path: str | Path) -> DedupSummary:
    """Summary of the graph right after torch's pass, on the model file at `path`."""
    return summarize_dedup(torch_dedup_graph(path))


def torch_compiled_graph(path: str | Path) -> torch.fx.GraphModule:
    """The graph a backend receives from `torch.compile` with deduplication on (end to end:
    after the pass, Dynamo's clean-ups have run), every invoke_subgraph kept."""
    f = load_model_file(path)
    seen: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
        seen.append(gm)
        return gm.forward

    flags = {"use_graph_deduplication": True, **keep_single_use()}
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(flags):
            torch.compile(f.model, backend=backend, fullgraph=True, dynamic=f.dynamic)(
                *f.example_inputs
            )
    finally:
        torch._dynamo.reset()
    assert len(seen) == 1, f"{path}: expected one graph, got {len(seen)}"
    return seen[0]


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
    updates count), run eagerly and through `torch.compile` (with or without deduplication,
    every invoke_subgraph kept). Each run loads the file afresh and starts from one seed on every
    generator (CHK-20), so a model with dropout compares."""
    eager_file = load_model_file(path)
    if eager_file.device != "cpu":
        raise FxOracleError(f"{path}: fake {eager_file.device} inputs cannot be run")
    with seeded():
        eager = _tensor_leaves(eager_file.model(*eager_file.example_inputs))
    compiled_file = load_model_file(path)
    flags = {"use_graph_deduplication": dedup, **keep_single_use()}
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(flags), seeded():
            compiled = torch.compile(compiled_file.model, backend="eager", fullgraph=True,
                                     dynamic=compiled_file.dynamic)  # fmt: skip
            outputs = _tensor_leaves(compiled(*compiled_file.example_inputs))
    finally:
        torch._dynamo.reset()
    return eager + _tensor_leaves(eager_file.example_inputs), outputs + _tensor_leaves(
        compiled_file.example_inputs
    )


def _tensor_leaves(value: object) -> tuple[torch.Tensor, ...]:
    return tuple(leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor))
