"""Capture: run Dynamo on a model with fxoracle's tracker installed (spec chapter 01, TRK-9).

`dynamo_tracker()` is the one documented hook into Dynamo: inside it, every `OutputGraph`
Dynamo creates gets a `reference.GraphRegionTracker` instead of torch's, node tracking is on and
torch's own deduplication is off. `capture(model, example_inputs)` compiles with fullgraph=True
and returns the graph module and its tracker. `load_model_file(path)` reads a model file.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import torch
import torch._dynamo
import torch.fx

from reference.errors import FxOracleError
from reference.tracker import GraphRegionTracker


@dataclass(frozen=True, slots=True)
class Capture:
    """A captured graph, the tracker that keyed it live, and the inputs it was captured with."""

    gm: torch.fx.GraphModule
    tracker: GraphRegionTracker
    example_inputs: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ModelFile:
    """A model file's contents: `model`, `example_inputs` and the optional `dynamic` flag."""

    path: Path
    model: Callable[..., Any]
    example_inputs: tuple[Any, ...]
    dynamic: bool


@contextmanager
def dynamo_tracker() -> Iterator[None]:
    """Make Dynamo track nodes with `reference.GraphRegionTracker`, torch's dedup off (TRK-9)."""
    import torch._dynamo.output_graph as output_graph

    with (
        torch._dynamo.config.patch(
            track_nodes_for_deduplication=True, use_graph_deduplication=False
        ),
        mock.patch.object(output_graph, "GraphRegionTracker", GraphRegionTracker),
    ):
        yield


def capture(
    model: Callable[..., Any], example_inputs: tuple[Any, ...], dynamic: bool = False
) -> Capture:
    """Capture `model` on `example_inputs` through Dynamo (fullgraph) with our tracker.

    Raises `FxOracleError` on a graph break or an exception in the model.
    """
    from torch._dynamo.symbolic_convert import InstructionTranslator

    captured: list[Capture] = []

    def backend(gm: torch.fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
        tracker = InstructionTranslator.current_tx().output.region_tracker
        assert isinstance(tracker, GraphRegionTracker), "TRK-9: our tracker is installed"
        captured.append(Capture(gm, tracker, tuple(snapshot(x) for x in inputs)))
        return gm.forward

    torch._dynamo.reset()
    try:
        with dynamo_tracker():
            torch.compile(model, backend=backend, fullgraph=True, dynamic=dynamic)(*example_inputs)
    except Exception as e:  # the user's model or Dynamo failed: bad input, one line
        raise FxOracleError(f"capture failed: {type(e).__name__}: {_first_line(e)}") from e
    finally:
        torch._dynamo.reset()
    if len(captured) != 1:
        raise FxOracleError(f"capture produced {len(captured)} graphs, expected exactly one")
    return captured[0]


def snapshot(value: Any) -> Any:
    """A copy of a graph input taken before the graph runs (the model may mutate its inputs)."""
    if isinstance(value, torch.Tensor) and not value.is_meta:
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def fresh_inputs(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Copies of `inputs` for one more run, so runs never see each other's mutations."""
    return tuple(snapshot(x) for x in inputs)


def load_model_file(path: str | Path) -> ModelFile:
    """Run a model file and read `model`, `example_inputs` and optional `dynamic`."""
    p = Path(path)
    if not p.is_file():
        raise FxOracleError(f"{p}: no such file")
    try:
        ns = runpy.run_path(str(p), run_name="__fxoracle_model__")
    except SyntaxError as e:
        raise FxOracleError(f"{p}:{e.lineno}: syntax error: {e.msg}") from e
    except Exception as e:
        raise FxOracleError(f"{p}: loading failed: {type(e).__name__}: {_first_line(e)}") from e
    for name in ("model", "example_inputs"):
        if name not in ns:
            raise FxOracleError(f"{p}: defines no `{name}`")
    if not callable(ns["model"]):
        raise FxOracleError(f"{p}: `model` is not callable")
    inputs = ns["example_inputs"]
    if not isinstance(inputs, tuple):
        raise FxOracleError(f"{p}: `example_inputs` must be a tuple, not {type(inputs).__name__}")
    return ModelFile(p, ns["model"], inputs, bool(ns.get("dynamic", False)))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else "(no message)"
