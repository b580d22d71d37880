"""Node identity: the key that decides which nodes are interchangeable (spec chapter 01, TRK).

A key is a readable frozen value, never a hash of a pickle: two nodes are identical exactly when
their keys are equal. It holds the global state at tracking time, the call site, the op and the
target (by qualified name), the sorted kwarg names and every argument: a node argument by the
metadata of its example value, a constant by its type and value, containers with their structure.

This module is the definition; `reference.fast.keys` computes the same keys for a whole graph
faster (TRK-13).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch._C._functorch import is_batchedtensor, is_functorch_wrapped_tensor, is_gradtrackingtensor
from torch._prims_common import suggest_memory_format
from torch._subclasses.meta_utils import is_sparse_any

from reference.fx_helpers import example_value
from reference.names import constant_text, qualified_name
from reference.torch_version import TORCH


@dataclass(frozen=True, slots=True)
class GlobalState:
    """The global state torch's tracker records per node (TRK-2); `tf32` as the installed
    torch keys it (`reference.torch_version`)."""

    grad_enabled: bool
    inference_mode: bool
    num_threads: int
    cublas_fp16_reduced_precision: tuple[bool, ...]
    cublas_bf16_reduced_precision: tuple[bool, ...]
    default_dtype: str
    deterministic: bool
    tf32: bool | str
    deterministic_warn_only: bool
    saved_tensor_hooks_enabled: bool


@dataclass(frozen=True, slots=True)
class CallSite:
    """Where the user's code created the node; `offset` is the bytecode offset when known."""

    filename: str
    line: int
    offset: int | None


ORIGIN_META = "fxoracle_origin"  # node.meta key of a captured node's `Origin`


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the user's code created a node and the global state at tracking time: the parts of
    its key that node metadata does not carry otherwise (TRK-2, TRK-10). Capture stores it in
    `node.meta[ORIGIN_META]` for every keyed node."""

    call_site: CallSite | None
    global_state: GlobalState


@dataclass(frozen=True, slots=True)
class TensorMeta:
    """A tensor argument's metadata (TRK-4): what an op's result can depend on besides values."""

    dtype: str
    shape: tuple[str, ...]
    stride: tuple[str, ...]
    device: str
    layout: str
    memory_format: str
    requires_grad: bool
    flags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SymValue:
    """A symbolic scalar (SymInt, SymFloat, SymBool) by its canonical expression."""

    kind: str
    expr: str


@dataclass(frozen=True, slots=True)
class Const:
    """A constant by type and canonical value (TRK-5): `Const("float", "0.5")`."""

    type: str
    value: str


@dataclass(frozen=True, slots=True)
class Seq:
    """A tuple, list, torch.Size or slice (`kind` "slice": start, stop, step), structure kept."""

    kind: str
    items: tuple[ArgKey, ...]


@dataclass(frozen=True, slots=True)
class Dict:
    """A dict argument: each key as a constant (TRK-5: `{1: x}` and `{"1": x}` differ) with its
    value's key, in the constants' sorted order."""

    items: tuple[tuple[Const, ArgKey], ...]


@dataclass(frozen=True, slots=True)
class Missing:
    """A node argument without example value metadata."""


ArgKey = TensorMeta | SymValue | Const | Seq | Dict | Missing


@dataclass(frozen=True, slots=True)
class NodeKey:
    """The identity of a node (TRK-1): equal keys mean interchangeable nodes."""

    global_state: GlobalState
    call_site: CallSite | None
    op: str
    target: str
    kwarg_names: tuple[str, ...]
    args: tuple[ArgKey, ...]
    kwargs: tuple[ArgKey, ...]


class Unkeyable(Exception):
    """An argument no key can describe deterministically: the node stays untracked (TRK-7)."""


def current_global_state() -> GlobalState:
    """Read the process's global state, the fields torch's tracker reads (TRK-2), in
    `GlobalState`'s field order."""
    return GlobalState(
        torch.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        torch.get_num_threads(),
        tuple(torch._C._get_cublas_allow_fp16_reduced_precision_reduction()),
        tuple(torch._C._get_cublas_allow_bf16_reduced_precision_reduction()),
        str(torch.get_default_dtype()),
        torch.are_deterministic_algorithms_enabled(),
        tf32_key(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        bool(getattr(torch._C._autograd, "_saved_tensors_hooks_is_enabled")()),  # noqa: B009
    )


def tf32_key() -> bool | str:
    """TF32 for CUDA matmuls as the installed torch keys it: from 2.15 the `fp32_precision`
    string, before a bool (TRK-2). The bool is read from the precision string, which never raises,
    where torch's own `_get_cublas_allow_tf32()` raises once the new API was used."""
    precision = str(torch._C._get_fp32_precision_getter("cuda", "matmul"))
    return precision if TORCH.tf32_key == "fp32_precision" else precision == "tf32"


def node_key(node: torch.fx.Node, state: GlobalState, site: CallSite | None) -> NodeKey:
    """The key of `node`; raises `Unkeyable` when an argument has no deterministic description."""
    names = tuple(sorted(node.kwargs))  # TRK-11
    args = tuple(map(value_key, node.args))
    kwargs = tuple(value_key(node.kwargs[n]) for n in names)
    return NodeKey(state, site, node.op, qualified_name(node.target), names, args, kwargs)


def value_key(value: Any) -> ArgKey:
    """Describe an argument by type and content (TRK-4, TRK-5): a node by its example value
    (`Missing` without one), containers with their structure (they may hold nodes: `cat((a,
    b))`), anything else as a constant."""
    if isinstance(value, torch.fx.Node):
        found = example_value(value)
        return Missing() if found is None else value_key(found)
    if isinstance(value, torch.Tensor):
        return tensor_meta(value)
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return SymValue(type(value).__name__, str(value.node.expr))
    if isinstance(value, (tuple, list)):
        kind = "size" if isinstance(value, torch.Size) else type(value).__name__
        return Seq(kind, tuple(map(value_key, value)))
    if isinstance(value, slice):
        return Seq("slice", tuple(map(value_key, (value.start, value.stop, value.step))))
    if isinstance(value, dict):
        return dict_key(value, value_key)
    return constant_key(value)


def dict_key(value: dict[Any, Any], describe: Callable[[Any], ArgKey]) -> Dict:
    """A dict argument's key: its keys as constants, sorted, each with `describe` of its value."""
    keyed = sorted(((constant_key(k), k) for k in value), key=lambda p: (p[0].type, p[0].value))
    return Dict(tuple((const, describe(value[k])) for const, k in keyed))


def constant_key(value: Any) -> Const:
    """A constant by type and canonical text (`names.constant_text`, TRK-5); `Unkeyable` for an
    object without one (TRK-7)."""
    text = constant_text(value)
    if text is None:
        raise Unkeyable(f"no deterministic description for a {type(value).__qualname__} constant")
    return Const(*text)


def tensor_meta(t: torch.Tensor) -> TensorMeta:
    """Metadata as torch's cache key has it (`extract_tensor_metadata`), read directly from the
    tensor (TRK-4); storage offset and storage size are not part of it. `Unkeyable` for a
    functorch-wrapped tensor (TRK-14)."""
    if is_functorch_wrapped_tensor(t):
        raise Unkeyable(f"a {functorch_kind(t)}: its metadata hides the transform's dimension "
                        "and level")  # fmt: skip
    flags = (t.is_quantized, t.is_conj(), t.is_neg(), t.is_inference(), t.is_sparse)
    return TensorMeta(
        dtype=str(t.dtype),
        shape=tuple(map(str, t.shape)),
        stride=tuple(map(str, t.stride())) if t.layout == torch.strided else (),
        device=str(t.device),
        layout=str(t.layout),
        memory_format=_memory_format(t),
        requires_grad=t.requires_grad,
        flags=tuple(name for name, on in zip(_FLAG_NAMES, flags, strict=True) if on),
    )


def functorch_kind(t: torch.Tensor) -> str:
    """What kind of functorch-wrapped tensor `t` is (`is_functorch_wrapped_tensor(t)` holds)."""
    if is_batchedtensor(t):
        return "vmap-batched tensor"
    if is_gradtrackingtensor(t):
        return "torch.func grad-tracking tensor"
    return "functorch-wrapped tensor"


_FLAG_NAMES = ("is_quantized", "is_conj", "is_neg", "is_inference", "is_sparse")


def _memory_format(t: torch.Tensor) -> str:
    """The format `t` is dense in, as torch's cache key says it: torch's `suggest_memory_format`,
    then an `is_contiguous` check; "None" when symbolic, sparse, or dense in no format."""
    if t._has_symbolic_sizes_strides or is_sparse_any(t):
        return "None"
    suggested = suggest_memory_format(t)
    return str(suggested) if t.is_contiguous(memory_format=suggested) else "None"
