"""Running both sides on one model: capture it once, then every chosen component (spec chapter
08, DIF-2 to DIF-5, DIF-9).

`capture_for(model, sides)` is the capture both sides work on (`reference.dynamo.capture.capture`,
with torch's tracker too when the other side is torch); `diff_capture(graph, sides)` runs each
chosen component on copies of it (`COMPARE`: `model_level` and `graph_level`). An exception of a
side is a divergence; an exception of the oracle itself an `oracle-error` divergence, never a
crash.
Both leave torch's grad and autocast modes as they found them (`torch_modes_kept`): a side that
raises inside a graph's autocast region would otherwise leave autocast on for every later model
of the process (DIF-13).
"""

from __future__ import annotations

import linecache
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from checker.io.model_file import Model
from checker.oracle.compare.divergence import Blame, Blamed, Divergence, Evidence, Kind, divergence
from checker.oracle.compare.graph_level import compare_sort, compare_split
from checker.oracle.compare.judge import Failure, attempt
from checker.oracle.compare.model_level import Subject, compare_dedup
from checker.oracle.compare.tracker_level import compare_tracker
from checker.oracle.sides.impls import uses_torch_tracker
from checker.oracle.sides.sides import Component, Sides
from checker.proof.runs import torch_modes_kept
from reference.dynamo.capture import Capture, capture
from reference.errors import FxOracleError, describe


def capture_for(model: Model, sides: Sides) -> Capture | Divergence:
    """The capture both sides work on. When it fails: torch's tracker's crash if the capture
    works without it; the reference's crash if torch alone can compile the model; bad input
    (`FxOracleError`) if neither can (DIF-2). torch's modes are left as they were."""
    with torch_modes_kept():
        return _capture_for(model, sides)


def _capture_for(model: Model, sides: Sides) -> Capture | Divergence:
    theirs = uses_torch_tracker(sides.other)
    found = _capture(model, theirs)
    if isinstance(found, Capture):
        return found
    component = Component.TRACKER if Component.TRACKER in sides.components else sides.components[0]
    if theirs and isinstance(_capture(model, False), Capture):
        crash = Blamed(Blame.OTHER, f"{sides.label}'s tracker {found}", Evidence(found.raised))
        return divergence(sides, component, Kind.CRASH, crash)
    plain = attempt(lambda: _torch_only(model))
    if isinstance(plain, Failure):
        raise FxOracleError(
            f"{model.name}: neither side can capture it: {describe(found.error)}"
        ) from found.error
    crash = Blamed(Blame.REFERENCE, f"reference {found}", Evidence(found.raised))
    return divergence(sides, component, Kind.CRASH, crash)


def _capture(model: Model, with_torch_tracker: bool) -> Capture | Failure:
    """The capture, or what it raised (told by the caller, never raised)."""
    return attempt(lambda: capture(model.model, model.example_inputs, model.dynamic,
                                   with_torch_tracker=with_torch_tracker))  # fmt: skip


def _torch_only(model: Model) -> None:
    torch._dynamo.reset()
    try:
        compiled = torch.compile(
            model.model, backend="eager", fullgraph=True, dynamic=model.dynamic
        )
        compiled(*model.example_inputs)
    finally:
        torch._dynamo.reset()


COMPARE: Mapping[Component, Callable[[Subject, Sides], list[Divergence]]] = {
    Component.TRACKER: compare_tracker, Component.DEDUP: compare_dedup,
    Component.SORT: compare_sort, Component.SPLIT: compare_split,
}  # fmt: skip


def diff_capture(graph: Capture, sides: Sides) -> tuple[Divergence, ...]:
    """The divergences of every chosen component on one capture (a side's crash included);
    torch's modes are left as they were, whatever a side does."""
    with torch_modes_kept():
        return _diff_capture(graph, sides)


def _diff_capture(graph: Capture, sides: Sides) -> tuple[Divergence, ...]:
    subject = Subject(graph, sides)
    found: list[Divergence] = []
    for component in sides.components:
        try:
            found += COMPARE[component](subject, sides)
        except Exception as e:  # a bug of the oracle itself: reported, never a crash
            where = traceback.extract_tb(e.__traceback__)[-1]
            at = f" at {Path(where.filename).name}:{where.lineno}"
            detail = describe(e) + at
            oops = Blamed(Blame.UNKNOWN, detail)
            found.append(divergence(sides, component, Kind.ORACLE_ERROR, oops))
    return tuple(found)


@contextmanager
def model_caches_dropped() -> Iterator[None]:
    """What torch keeps process-wide for a model is dropped after it (DIF-13). fx keeps the
    source of every `GraphModule` it compiles in a module-level cache and in `linecache`, a few
    hundred per diffed model; `FakeTensorMode`'s dispatch cache, a class attribute, keeps
    entries whose symbolic inputs hold their `ShapeEnv`, and through its tracked fakes the
    model's fake tensors and mode; `ShapeEnv`'s memoized methods are class-level caches keyed
    by the instance. Entries the block adds are removed at its end, the method caches cleared;
    the block is one model, whose modules and tensors are garbage by then. Without it a
    campaign's process grows by ~0.3 MB a model."""
    loader = torch.fx.graph_module._loader
    fake_cache = FakeTensorMode.cache
    sources, dispatches = set(loader.eval_cache), set(fake_cache)
    try:
        yield
    finally:
        for key in [k for k in loader.eval_cache if k not in sources]:
            del loader.eval_cache[key]
            linecache.cache.pop(key, None)
        for entry in [k for k in fake_cache if k not in dispatches]:
            del fake_cache[entry]
        for method in vars(ShapeEnv).values():
            clear = getattr(method, "cache_clear", None)  # lru_cache and torch's `_lru_cache`
            if callable(clear):
                clear()
