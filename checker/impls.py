"""Implementations under test and what each part is run on (spec chapter 08, DIF-1, DIF-2,
DIF-5).

An implementation is any object with some of four parts, each a `Protocol`:

  FindsRegions   find_regions(path) -> region groups (node names of Dynamo's capture of `path`)
  Deduplicates   deduplicate(path)  -> DedupOutput (the graph before and after the pass)
  Sorts          stable_sort(graph, deps)   reorders `graph` in place
  Splits         split(gm, callback, keep_original_order, affix) -> the split module

The region finder and the deduplicator take a model file because torch's need Dynamo (its
tracker keys nodes while Dynamo builds them); the sort and the splitter take graphs: scrambles
of the captured graph (`sort_input`) and partition policies (`SplitCase`). Built in:
`reference`, `torch` (torch 2.13: its tracker and the raw output of `apply_graph_deduplication`,
`_stable_topological_sort`, `split_module`) and `torch-simple` (`split_module_simple`).
`load_impl("pkg.mod:attr")` loads a user's object (a class is instantiated). A part may raise
`NotImplementedError` for a case it does not support: that case is skipped. This module
touches torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

import importlib
import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable
from unittest import mock

import torch
import torch.fx

from reference.errors import FxOracleError

Node = torch.fx.Node
RegionGroups = tuple[tuple[tuple[str, ...], ...], ...]  # groups, regions, node names
Buckets = tuple[tuple[str, ...], ...]  # the tracker's buckets of key-equal nodes (2 or more)
Callback = Callable[[Node], int]


@dataclass(frozen=True, slots=True, eq=False)
class DedupOutput:
    """One deduplication pass: a copy of the graph before it, the graph after it, the inputs
    both take, the region groups and key buckets the pass used and, if known, its deps."""

    original: torch.fx.GraphModule
    transformed: torch.fx.GraphModule
    inputs: tuple[Any, ...]
    groups: RegionGroups
    extra_deps: Mapping[Node, Sequence[Node]] | None = None
    buckets: Buckets = ()


@runtime_checkable
class FindsRegions(Protocol):
    def find_regions(self, path: Path) -> RegionGroups: ...


@runtime_checkable
class Deduplicates(Protocol):
    def deduplicate(self, path: Path) -> DedupOutput: ...


@runtime_checkable
class Sorts(Protocol):
    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None: ...


@runtime_checkable
class Splits(Protocol):
    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule: ...  # fmt: skip


PARTS: tuple[tuple[str, type], ...] = (
    ("tracker", FindsRegions), ("dedup", Deduplicates), ("sort", Sorts), ("split", Splits),
)  # fmt: skip


def parts_of(impl: object) -> tuple[str, ...]:
    """The components `impl` implements, in `PARTS` order (DIF-1)."""
    return tuple(name for name, proto in PARTS if isinstance(impl, proto))


class _Captures:
    """One capture of a model file serves `find_regions` and `deduplicate`."""

    def __init__(self) -> None:
        self._last: tuple[Path, DedupOutput] | None = None

    def _dedup(self, path: Path) -> DedupOutput:
        raise NotImplementedError

    def deduplicate(self, path: Path) -> DedupOutput:
        if self._last is None or self._last[0] != path:
            self._last = (path, self._dedup(path))
        return self._last[1]

    def find_regions(self, path: Path) -> RegionGroups:
        return self.deduplicate(path).groups

    def forget(self) -> None:
        """Drop the cached capture (the model file may have changed)."""
        self._last = None


class ReferenceImpl(_Captures):
    """fxoracle's reference pipeline, every part."""

    label = "reference"

    def _dedup(self, path: Path) -> DedupOutput:
        from checker.graph_copy import copy_graph_module
        from reference.capture import capture, load_model_file
        from reference.dedup import deduplicate
        from reference.regions import find_identical_regions

        mf = load_model_file(path)
        c = capture(mf.model, mf.example_inputs, mf.dynamic)
        original = copy_graph_module(c.gm).gm
        groups = _names(find_identical_regions(c.gm.graph, c.tracker))
        buckets = _buckets(c.tracker.key_to_duplicates.values())
        done = deduplicate(c.gm, c.tracker)
        return DedupOutput(original, c.gm, c.example_inputs, groups, done.extra_deps, buckets)

    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        from reference.order import stable_topological_sort

        stable_topological_sort(graph, deps)

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        from reference.split import split_module

        return split_module(gm, None, callback, keep_original_order=keep_original_order,
                            partition_affix=partition_affix)  # fmt: skip


class TorchImpl(_Captures):
    """torch 2.13's own pass, sort and splitter (the raw output of each, nothing inlined)."""

    label = "torch"

    def _dedup(self, path: Path) -> DedupOutput:
        return _torch_dedup(path)

    def find_regions(self, path: Path) -> RegionGroups:
        try:
            return self.deduplicate(path).groups
        except TorchCrash as e:
            if e.groups is None:
                raise
            return e.groups  # the pass crashed after finding its regions

    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        from torch._dynamo.graph_deduplication import _stable_topological_sort
        from torch.utils._ordered_set import OrderedSet

        _stable_topological_sort(graph, {n: OrderedSet(d) for n, d in deps.items()})

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        from torch.fx.passes.split_module import split_module

        root = cast(torch.nn.Module, None)  # unused by torch, typed as a Module
        return split_module(gm, root, callback, keep_original_order=keep_original_order,
                            partition_affix=partition_affix)  # fmt: skip


class TorchSimpleImpl:
    """torch 2.13's `split_module_simple` within its documented preconditions (no get_attr,
    no grad-mode or autocast node, ids non-decreasing in node order). It runs partitions in
    first-appearance order, so only `keep_original_order=True` is compared."""

    label = "torch"

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        from torch.fx.passes.split_module import split_module_simple

        calls = [n for n in gm.graph.nodes if n.op in PARTITIONED]
        ids = [callback(n) for n in calls]
        state = (torch._C._set_grad_enabled, *_autocast_targets())
        if not keep_original_order or any(n.op == "get_attr" for n in gm.graph.nodes):
            raise NotImplementedError("split_module_simple: original order, no get_attr")
        if any(n.target in state for n in calls) or any(a > b for a, b in itertools.pairwise(ids)):
            raise NotImplementedError("split_module_simple: no global state, monotonic ids")
        return split_module_simple(gm, dict(zip(calls, ids, strict=True)),
                                   partition_affix=partition_affix)  # fmt: skip


def _autocast_targets() -> tuple[object, ...]:
    from torch.amp.autocast_mode import _enter_autocast, _exit_autocast

    return (_enter_autocast, _exit_autocast)


def _names(groups: Sequence[Sequence[Sequence[Node]]]) -> RegionGroups:
    return tuple(tuple(tuple(n.name for n in region) for region in group) for group in groups)


def _buckets(buckets: Iterable[Sequence[Node]]) -> Buckets:
    return tuple(tuple(n.name for n in b) for b in buckets if len(b) > 1)


class TorchCrash(Exception):
    """torch raised while capturing or deduplicating; `groups` are the region groups its pass
    had found, if it got that far."""

    def __init__(self, message: str, groups: RegionGroups | None = None) -> None:
        super().__init__(message)
        self.groups = groups


def _torch_dedup(path: Path) -> DedupOutput:
    """Capture `path` with torch's dedup on and observe `apply_graph_deduplication`: the graph
    before (copied), the region groups it asked for, the graph right after (copied)."""
    from reference.capture import load_model_file

    mf = load_model_file(path)
    seen: list[DedupOutput] = []
    asked: list[RegionGroups] = []
    flags = {"use_graph_deduplication": True, "inline_single_use_invoke_subgraph": False}
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(flags), _observed(seen, asked):
            compiled = torch.compile(mf.model, backend="eager", fullgraph=True, dynamic=mf.dynamic)
            compiled(*mf.example_inputs)
    except Exception as e:  # torch crashed on this model: the diff reports it
        raise TorchCrash(f"{type(e).__name__}: {_first_line(e)}", *asked[:1]) from e
    finally:
        torch._dynamo.reset()
    if len(seen) != 1:
        raise FxOracleError(f"{path}: torch produced {len(seen)} graphs, expected exactly one")
    return seen[0]


@contextmanager
def _observed(sink: list[DedupOutput], asked: list[RegionGroups]) -> Iterator[None]:
    import torch._dynamo.output_graph as output_graph

    from checker.graph_copy import copy_graph_module
    from reference.capture import snapshot

    original = getattr(output_graph, "apply_graph_deduplication")  # noqa: B009

    def observe(out: Any) -> dict[str, torch.fx.GraphModule]:
        before = copy_graph_module(torch.fx.GraphModule(dict(out.nn_modules), out.graph)).gm
        inputs = tuple(snapshot(arg.example) for arg in out.graphargs)
        tracker = out.region_tracker
        buckets = _buckets(tracker.hash_to_duplicates.values())
        find = tracker.get_identical_regions

        def spy(graph: torch.fx.Graph) -> list[list[list[Node]]]:
            found = cast(list[list[list[Node]]], find(graph))
            asked.append(_names(found))
            return found

        with mock.patch.object(tracker, "get_identical_regions", spy):
            result = cast(dict[str, torch.fx.GraphModule], original(out))
        after = copy_graph_module(torch.fx.GraphModule(dict(out.nn_modules), out.graph)).gm
        sink.append(DedupOutput(before, after, inputs, asked[0] if asked else (), None, buckets))
        return result

    with mock.patch.object(output_graph, "apply_graph_deduplication", observe):
        yield


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else "(no message)"


BUILT_IN: Mapping[str, Callable[[], object]] = {
    "reference": ReferenceImpl, "torch": TorchImpl, "torch-simple": TorchSimpleImpl,
}  # fmt: skip


def load_impl(spec: str) -> object:
    """`reference`, `torch`, `torch-simple`, or `module:attr` (an object or a class, which is
    instantiated); `FxOracleError` when it cannot be loaded or implements no part (DIF-1)."""
    if spec in BUILT_IN:
        return BUILT_IN[spec]()
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise FxOracleError(f"--against {spec!r}: expected {', '.join(BUILT_IN)} or module:attr")
    try:
        found: object = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise FxOracleError(f"--against {spec}: {type(e).__name__}: {_first_line(e)}") from e
    impl = found() if isinstance(found, type) else found
    if not parts_of(impl):
        names = ", ".join(f"{name} ({proto.__name__})" for name, proto in PARTS)
        raise FxOracleError(f"--against {spec}: implements none of {names}")
    return impl


def label_of(impl: object, spec: str) -> str:
    """The name reports give the side under test: `torch` for both torch adapters, else the
    spec (`reference` against itself is `reference-copy`, so the two sides never share one)."""
    del impl
    return {"torch": "torch", "torch-simple": "torch", "reference": "reference-copy"}.get(
        spec, spec
    )


# -- what the graph-level parts are run on (DIF-5) ---------------------------------------------
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


def split_with(side: Any, gm: torch.fx.GraphModule, case: SplitCase) -> torch.fx.GraphModule:
    """`side.split` on `gm` under `case`."""
    ids = partition_ids(case.policy, gm)
    split: torch.fx.GraphModule = side.split(gm, ids.__getitem__, case.keep_original_order,
                                             case.affix)  # fmt: skip
    return split


def sort_input(
    base: torch.fx.GraphModule, scramble: str
) -> tuple[torch.fx.GraphModule, dict[Node, tuple[Node, ...]]]:
    """A copy of `base` with its body scrambled (`reversed`, or a seeded shuffle), and torch's
    ordering deps for it (mutation order and autocast pins), computed before scrambling."""
    from checker.graph_copy import copy_graph_module
    from reference.deps import OrderingDeps
    from reference.mutation import mutated_positions

    gm = copy_graph_module(base).gm
    nodes = list(gm.graph.nodes)
    positions = {n: mutated_positions(n) for n in nodes}
    deps = OrderingDeps.from_graph(gm.graph, positions, pin_grad_mode=False).as_mapping()
    body, output = nodes[:-1], nodes[-1]
    if scramble == "reversed":
        body.reverse()
    else:
        random.Random(scramble).shuffle(body)
    for node in body:
        output.prepend(node)
    return gm, deps
