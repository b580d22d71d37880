"""Implementations under test (spec chapter 08, DIF-1 and DIF-2).

An implementation is any object with some of four parts, each a `Protocol`:

  FindsRegions   find_regions(path) -> region groups (node names of Dynamo's capture of `path`)
  Deduplicates   deduplicate(path)  -> DedupOutput (the graph before and after the pass)
  Sorts          stable_sort(graph, deps)   reorders `graph` in place
  Splits         split(gm, callback, keep_original_order, affix) -> the split module

The region finder and the deduplicator take a model file because torch's need Dynamo (its
tracker keys nodes while Dynamo builds them); the sort and the splitter take graphs: scrambles
of the captured graph and partition policies (`checker.cases`). Built in: `reference`, `torch`
(torch 2.13: its tracker and the raw output of `apply_graph_deduplication`, observed by
`checker.torch_dedup`, `_stable_topological_sort`, `split_module`) and `torch-simple`
(`split_module_simple`). `load_impl("pkg.mod:attr")` loads a user's object (a class is
instantiated). A part may raise `NotImplementedError` for a case it does not support: that
case is skipped. This module touches torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import torch
import torch.fx

# re-exported: tests and the repros written by `checker.shrink` import these from here
from checker.cases import HOSTILE_SPLIT_CASES as HOSTILE_SPLIT_CASES
from checker.cases import PARTITIONED
from checker.cases import SPLIT_CASES as SPLIT_CASES
from checker.cases import SplitCase as SplitCase
from checker.cases import partition_ids as partition_ids
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
    refusals: tuple[str, ...] = ()  # regions the pass left alone, and why (if it says)


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

    def _dedup(self, path: Path, torch_rules: tuple[bool, bool] = (False, False)) -> DedupOutput:
        from checker.graph_copy import copy_graph_module
        from reference.capture import capture, load_model_file
        from reference.dedup import deduplicate
        from reference.regions import find_identical_regions

        mf = load_model_file(path)
        c = capture(mf.model, mf.example_inputs, mf.dynamic)
        original = copy_graph_module(c.gm).gm
        groups = region_names(find_identical_regions(c.gm.graph, c.tracker))
        buckets = bucket_names(c.tracker.key_to_duplicates.values())
        unpinned, dropping = torch_rules
        done = deduplicate(
            c.gm, c.tracker, pin_grad_mode=not unpinned, keep_erased_deps=not dropping
        )
        refusals = tuple(
            f"group {r.group} region {'*' if r.region is None else r.region}: {r.reason.value}"
            + (f" ({r.detail})" if r.detail else "")
            for r in done.refused
        )
        return DedupOutput(
            original, c.gm, c.example_inputs, groups, done.extra_deps, buckets, refusals
        )

    def deduplicate_with_torch_rules(self, path: Path, rules: tuple[bool, bool]) -> DedupOutput:
        """`deduplicate` with torch 2.13's ordering rules: (no grad-mode pin, SRT-8; erased
        nodes' own deps dropped, SRT-10), each when asked."""
        return self._dedup(path, rules)

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
        from checker.torch_dedup import torch_dedup  # here: that module imports this one

        return torch_dedup(path)

    def find_regions(self, path: Path) -> RegionGroups:
        from checker.torch_dedup import TorchCrash

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


def region_names(groups: Sequence[Sequence[Sequence[Node]]]) -> RegionGroups:
    """Region groups of nodes as region groups of node names."""
    return tuple(tuple(tuple(n.name for n in region) for region in group) for group in groups)


def bucket_names(buckets: Iterable[Sequence[Node]]) -> Buckets:
    """A tracker's buckets of key-equal nodes as node names, those of 2 or more nodes only."""
    return tuple(tuple(n.name for n in b) for b in buckets if len(b) > 1)


def first_line(e: BaseException) -> str:
    """The first line of `e`'s message, or `(no message)`."""
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
        raise FxOracleError(f"--against {spec}: {type(e).__name__}: {first_line(e)}") from e
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
