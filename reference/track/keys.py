"""Node identity: the key that decides which nodes are interchangeable (spec chapter 01, TRK).

A key is a readable frozen value, never a hash of a pickle: two nodes are identical exactly when
their keys are equal. It holds the global state at tracking time, the call site, the op and the
target (by qualified name), the sorted kwarg names and every argument: a node argument by the
metadata of its example value, a constant by its type and value, containers with their structure.

This module is the definition; `fast_keys` computes the same keys for a whole graph faster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

import torch
import torch.fx
from torch._C._functorch import is_batchedtensor, is_functorch_wrapped_tensor, is_gradtrackingtensor
from torch._prims_common import suggest_memory_format

from reference.fx_helpers import example_value
from reference.names import qualified_name
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
    _hash: int = field(init=False, repr=False, compare=False)  # every node key hashes it

    def __post_init__(self) -> None:
        compared = tuple(getattr(self, f.name) for f in fields(self) if f.compare)
        object.__setattr__(self, "_hash", hash(compared))

    def __hash__(self) -> int:
        return self._hash


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
    _hash: int = field(init=False, repr=False, compare=False)  # shared by many keys (TRK-13)

    def __post_init__(self) -> None:
        value = (self.dtype, self.shape, self.stride, self.device, self.layout,
                 self.memory_format, self.requires_grad, self.flags)  # fmt: skip
        object.__setattr__(self, "_hash", hash(value))

    def __hash__(self) -> int:
        return self._hash


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
    """A tuple, list or torch.Size, structure kept."""

    kind: str
    items: tuple[ArgKey, ...]


@dataclass(frozen=True, slots=True)
class Dict:
    """A dict argument, items in sorted key order."""

    items: tuple[tuple[str, ArgKey], ...]


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
    """Read the process's global state, the fields torch's tracker reads (TRK-2)."""
    return GlobalState(
        grad_enabled=torch.is_grad_enabled(),
        inference_mode=torch.is_inference_mode_enabled(),
        num_threads=torch.get_num_threads(),
        cublas_fp16_reduced_precision=tuple(
            torch._C._get_cublas_allow_fp16_reduced_precision_reduction()
        ),
        cublas_bf16_reduced_precision=tuple(
            torch._C._get_cublas_allow_bf16_reduced_precision_reduction()
        ),
        default_dtype=str(torch.get_default_dtype()),
        deterministic=torch.are_deterministic_algorithms_enabled(),
        tf32=tf32_key(),
        deterministic_warn_only=torch.is_deterministic_algorithms_warn_only_enabled(),
        saved_tensor_hooks_enabled=bool(
            getattr(torch._C._autograd, "_saved_tensors_hooks_is_enabled")()  # noqa: B009
        ),
    )


def tf32_key() -> bool | str:
    """TF32 for CUDA matmuls as the installed torch keys it: from 2.15 the `fp32_precision`
    string, before a bool (TRK-2). The bool is read from the precision string, which never raises,
    where torch's own `_get_cublas_allow_tf32()` raises once the new API was used."""
    precision = str(torch._C._get_fp32_precision_getter("cuda", "matmul"))
    return precision if TORCH.tf32_key == "fp32_precision" else precision == "tf32"


def node_key(node: torch.fx.Node, state: GlobalState, site: CallSite | None) -> NodeKey:
    """The key of `node`; raises `Unkeyable` when an argument has no deterministic description."""
    names = tuple(sorted(node.kwargs))
    return NodeKey(
        global_state=state,
        call_site=site,
        op=node.op,
        target=qualified_name(node.target),
        kwarg_names=names,
        args=tuple(map(arg_key, node.args)),
        kwargs=tuple(arg_key(node.kwargs[n]) for n in names),
    )


def arg_key(arg: Any) -> ArgKey:
    """Describe one argument: a node by its example value, anything else by itself.
    Containers keep their structure and may hold nodes (`cat((a, b))`)."""
    if isinstance(arg, torch.fx.Node):
        value = example_value(arg)
        return Missing() if value is None else value_key(value)
    return value_key(arg)


def value_key(value: Any) -> ArgKey:
    """Describe a value by type and content (TRK-4, TRK-5); container items by `arg_key`."""
    if isinstance(value, torch.Tensor):
        return tensor_meta(value)
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return SymValue(type(value).__name__, str(value.node.expr))
    if isinstance(value, (tuple, list)):
        kind = "size" if isinstance(value, torch.Size) else type(value).__name__
        return Seq(kind, tuple(map(arg_key, value)))
    if isinstance(value, slice):
        return Seq("slice", tuple(map(arg_key, (value.start, value.stop, value.step))))
    if isinstance(value, dict):
        return Dict(tuple((str(k), arg_key(value[k])) for k in sorted(value, key=str)))
    return constant_key(value)


_SCALAR_TYPES: tuple[type, ...] = (bool, int, float, complex, str, type(None), type(Ellipsis))
_TORCH_ENUMS: tuple[type, ...] = (torch.dtype, torch.device, torch.layout, torch.memory_format)


def constant_key(value: Any) -> Const:
    """A constant's type and canonical value; `Unkeyable` for objects without one (TRK-7)."""
    if isinstance(value, _SCALAR_TYPES):
        return Const(type(value).__name__, repr(value))
    if isinstance(value, _TORCH_ENUMS):
        return Const(type(value).__name__, str(value))
    if callable(value) and not isinstance(value, torch.nn.Module):
        name = qualified_name(value)
        if "." in name:
            return Const("callable", name)
    raise Unkeyable(f"no deterministic description for a {type(value).__qualname__} constant")


_SPARSE_LAYOUTS = frozenset(
    {torch.sparse_coo, torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc}
)
_CHANNELS_LAST_RANKS = (4, 5)  # the only ranks a channels-last memory format exists for


def tensor_meta(t: torch.Tensor) -> TensorMeta:
    """Metadata as torch's cache key has it (`extract_tensor_metadata`), read directly from the
    tensor (TRK-4); storage offset and storage size are not part of it. `Unkeyable` for a
    functorch-wrapped tensor (TRK-14)."""
    if is_functorch_wrapped_tensor(t):
        raise Unkeyable(f"a {functorch_kind(t)}: its metadata hides the transform's dimension "
                        "and level")  # fmt: skip
    layout = t.layout
    strided = layout == torch.strided
    flags = (t.is_quantized, t.is_conj(), t.is_neg(), t.is_inference(), t.is_sparse)
    return TensorMeta(
        dtype=str(t.dtype),
        shape=tuple(map(str, t.shape)),
        stride=tuple(map(str, t.stride())) if strided else (),
        device=str(t.device),
        layout=str(layout),
        memory_format=_memory_format(t, strided, layout in _SPARSE_LAYOUTS),
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


def _memory_format(t: torch.Tensor, strided: bool, sparse: bool) -> str:
    """The format `t` is dense in, as torch's cache key says it; "None" when symbolic, sparse,
    or dense in no format (torch's `suggest_memory_format`, then an `is_contiguous` check)."""
    if sparse or t._has_symbolic_sizes_strides:
        return "None"
    suggested = torch.contiguous_format
    if strided and t.dim() in _CHANNELS_LAST_RANKS:
        suggested = suggest_memory_format(t)
    return str(suggested) if t.is_contiguous(memory_format=suggested) else "None"


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def call_site_from_stack_trace(stack_trace: str | None) -> CallSite | None:
    """The innermost frame a node's `stack_trace` records (offline mode, TRK-10); no bytecode
    offset. Dynamo leaves torch's own files out of `stack_trace`, so a call inside one of
    torch's `nn` modules has the user's line that called the module."""
    if not stack_trace:
        return None
    frames = list(_FRAME.finditer(stack_trace))
    if not frames:
        return None
    last = frames[-1]
    return CallSite(last["file"], int(last["line"]), None)


def summary(key: NodeKey) -> str:
    """A one-line human summary of a key, for reports."""
    site = "?" if key.call_site is None else f"{key.call_site.filename}:{key.call_site.line}"
    return f"{key.op} {key.target} at {site}"
