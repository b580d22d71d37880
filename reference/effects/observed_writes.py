"""Observed writes (spec chapter 09, EFF-9): what a node writes, from what it does.

Version counters miss writes that do not bump them (`batch_norm`'s running statistics), and a
Dynamo node's target is often a Python function (`F.batch_norm`) with no schema. So live capture
also runs every call node once more, on fresh fake tensors shaped like its arguments' example
values, under a dispatch mode that records each aten op it reaches and the storages that op
writes (`write_tables.op_written_names`: its schema's `Tensor(a!)` arguments and the reviewed
`UNDECLARED` ones). A node writes the arguments whose storage was written. Where it cannot be
run so (no fake example values, a higher-order op, an error), the reviewed table of
Python-level functions tells; where that has no entry either, its writes are *unknown*.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch
import torch.fx
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from reference.effects.node_effects import Storage, storage_of, switch, value_leaves
from reference.effects.write_tables import in_tables, op_written_names, schema_bound, table_writes
from reference.fx_helpers import example_value, flat_node_args

Node = torch.fx.Node


def _recorder(written: set[Storage]) -> Any:
    """A dispatch mode that adds to `written` the storage of every tensor an aten op writes.
    (`TorchDispatchMode` is untyped: the subclass is made at run time.)"""

    def dispatch(mode: object, func: Any, types: object, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if isinstance(func, torch._ops.OpOverload):
            bound = schema_bound(func, args, kwargs)
            for name in op_written_names(func, bound):
                leaves = tree_leaves(bound.get(name))
                written.update(storage_of(t) for t in leaves if isinstance(t, torch.Tensor))
        return func(*args, **kwargs)

    base: Any = TorchDispatchMode
    return type("WriteRecorder", (base,), {"__torch_dispatch__": dispatch})()


def node_writes(node: Node, counted: tuple[int, ...]) -> tuple[tuple[int, ...], bool]:
    """The positions `node` writes as capture records them (EFF-9): what the version counters
    `counted`, with what running it showed, else what the tables say; and whether neither told
    (unknown: the counters are all there is). A switch (EFF-3) writes no tensor."""
    observed = observed_writes(node)
    if observed is None and in_tables(node.target):
        observed = table_writes(node)
    unknown = observed is None
    return tuple(sorted({*counted, *(observed or ())})), unknown


def graph_writes(
    graph: torch.fx.Graph, counted: Mapping[Node, Iterable[int]]
) -> dict[Node, tuple[int, ...]]:
    """Every writing call node of `graph` with its positions (EFF-9): `counted` by the version
    counters, with what running each node showed."""
    found = {n: node_writes(n, tuple(counted.get(n, ())))[0] for n in graph.nodes}
    return {n: p for n, p in found.items() if p and n.op.startswith("call_")}


def observed_writes(node: Node) -> tuple[int, ...] | None:
    """The flat argument positions `node` writes, seen by running it on fresh fakes, or None
    when it cannot be run so."""
    if node.op not in ("call_function", "call_method"):
        return None
    if isinstance(node.target, torch._ops.HigherOrderOperator):
        return None
    try:
        return _run_and_record(node)
    except Exception:  # a node that cannot run on fakes: its writes are unknown
        return None


def _run_and_record(node: Node) -> tuple[int, ...] | None:
    args = flat_node_args(node)
    values = [example_value(a) for a in args]
    leaves = [value_leaves(v) for v in values]
    if switch(node) is not None or (None not in leaves and not any(leaves)):
        return ()  # no tensor argument to write; a switch is never run (global state)
    mode = torch._guards.detect_fake_mode(values)
    if mode is None:
        return None  # unknown or real example values: not run
    written: set[Storage] = set()
    with torch.no_grad(), mode:
        fresh: dict[Node, Any] = {}
        for arg, value in zip(args, values, strict=True):
            fresh.setdefault(arg, tree_map(_fresh_like, value))
        with _recorder(written):
            _call(node, fresh)
    return tuple(
        p
        for p, arg in enumerate(args)
        if any(storage_of(t) in written for t in value_leaves(fresh[arg]) or ())
    )


def _fresh_like(value: Any) -> Any:
    """A new tensor of `value`'s size, strides, dtype and device, in a storage of its own."""
    if not isinstance(value, torch.Tensor):
        return value
    return torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device=value.device)


def _call(node: Node, fresh: Mapping[Node, Any]) -> None:
    args: Any = torch.fx.map_arg(node.args, fresh.__getitem__)
    kwargs: Any = torch.fx.map_arg(node.kwargs, fresh.__getitem__)
    if node.op == "call_method":
        getattr(args[0], str(node.target))(*args[1:], **kwargs)
        return
    function: Any = node.target
    function(*args, **kwargs)
