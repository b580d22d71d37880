"""Running two modules on the same inputs and comparing what they did: fxoracle's one
run-and-compare, used by the checker (CHK-6) and by the oracle's judge (DIF-4) alike (spec
chapter 06, CHK-6 and CHK-16).

`run(gm, inputs, caller_grad)` runs a module on clones of the inputs, under the caller's grad
mode, with every generator (the CPU's, each CUDA device's) forked and seeded (random ops
compare, and nothing outside the run changes: no process-wide seeding, CHK-20), on one
intra-op thread; it returns the output leaves, the inputs as the run left them and the grad
mode after. `compare_runs` compares two runs: every output, every input after the call,
`requires_grad` flags and the grad mode after.
Tolerance (CHK-16, CHK-19): `torch.testing.assert_close`'s rtol for the precision the value
was computed in (the dtype; TF32 for float32 on CUDA where torch's flags turn it on), its atol
scaled by the largest magnitude of the expected tensor (at least 1; on CUDA at least rtol
scaled); exact for integers and bools; NaN equals NaN. This module is fxoracle's one comparison
of numbers: the checker's CHK-6 and CHK-17 and the oracle's judge all call `agreement`.
The module's state (tensors its graphs read by `get_attr`: buffers, parameters, constants) is
read after the call on both sides and put back as it was; `compare_runs` also compares the
original's state after the call with the transformed module's tensors of the same names.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx
from torch.utils._pytree import tree_leaves

from checker.io.threads import one_thread
from checker.proof.draws import seeded
from checker.proof.graphs import graph_modules
from checker.proof.verdict import HOLDS, Unknown, Verdict, Violated
from reference.errors import describe
from reference.fx_helpers import attribute

# the lines of assert_close's message a witness keeps
_MESSAGE_LINES = ("Expected", "Absolute difference", "Greatest absolute", "The values for")


@dataclass(frozen=True, slots=True, eq=False)
class Ran:
    """What one run did: its output leaves, its inputs after the call, the grad mode after, and
    per state name asked for, the module's tensor of that name after the call (None: none)."""

    outputs: list[Any]
    inputs: list[Any]
    grad_mode: bool
    state: list[torch.Tensor | None] = field(default_factory=list)
    written: frozenset[str] = frozenset()  # the state names whose values the call changed


def run(
    gm: Callable[..., Any],
    inputs: Sequence[Any],
    caller_grad: bool = True,
    state: Sequence[str] = (),
) -> Ran | str:
    """`gm` (a module, or any callable) on clones of `inputs`, or the exception's one-line
    description. fx prints a failing module's generated code to stderr; the description keeps
    one line instead. `state`: names of the module's tensors (`held_tensors`) to read after the
    call; every one is put back as it was."""
    clones = [clone(v) for v in inputs]
    held = _named(gm, state)
    kept = [None if t is None else t.detach().clone() for t in held]
    try:
        with seeded(), contextlib.redirect_stderr(io.StringIO()), one_thread(), \
                torch_modes_kept():  # fmt: skip
            torch.set_grad_enabled(caller_grad)
            result = gm(*clones)
            settled([result, clones])
            after = torch.is_grad_enabled()
    except Exception as e:  # the module under test failed: report, never raise
        return describe(e)
    finally:
        left = [None if t is None else t.detach().clone() for t in held]
        _put_back(held, kept)
    written = {n for n, a, b in zip(state, kept, left, strict=True) if _changed(a, b)}
    return Ran(list(tree_leaves(result)), clones, after, left, frozenset(written))


def settled(values: Any) -> None:
    """Waits for the kernels CUDA queued for `values`' devices, so what a kernel raises (a
    device-side assert: an index out of range) is the run's that launched it, not whichever
    CUDA call comes next. Such an assert also ends CUDA for the rest of the process."""
    if any(isinstance(t, torch.Tensor) and t.is_cuda for t in tree_leaves(values)):
        torch.cuda.synchronize()


def _changed(before: torch.Tensor | None, after: torch.Tensor | None) -> bool:
    return before is not None and after is not None and not torch.equal(before, after)


def _holder(gm: Callable[..., Any]) -> torch.nn.Module | None:
    """The module `gm` runs: itself, or the module of an interpreter's bound `run`."""
    if isinstance(gm, torch.nn.Module):
        return gm
    owner = getattr(gm, "__self__", None)
    return owner.module if isinstance(owner, torch.fx.Interpreter) else None


def held_tensors(gm: Callable[..., Any]) -> list[str]:
    """The names (dotted paths) of the tensors the graphs of `gm`'s module read by `get_attr`,
    each once, in graph order: the state a run may change besides its inputs (CHK-6)."""
    module = _holder(gm)
    if not isinstance(module, torch.fx.GraphModule):
        return []
    found: dict[str, None] = {}
    for prefix, sub in graph_modules(module):
        for node in sub.graph.find_nodes(op="get_attr"):
            if isinstance(attribute(sub, str(node.target)), torch.Tensor):
                found.setdefault(f"{prefix}{node.target}")
    return list(found)


def _named(gm: Callable[..., Any], names: Sequence[str]) -> list[torch.Tensor | None]:
    module = _holder(gm) if names else None
    found = [attribute(module, n) if module is not None else None for n in names]
    return [t if isinstance(t, torch.Tensor) else None for t in found]


def _put_back(held: Sequence[torch.Tensor | None], kept: Sequence[torch.Tensor | None]) -> None:
    with torch.no_grad():
        for tensor, value in zip(held, kept, strict=True):
            if tensor is not None and value is not None:
                tensor.copy_(value)


_AUTOCAST_DEVICES = ("cpu", "cuda")


@contextmanager
def torch_modes_kept() -> Iterator[None]:
    """Grad and autocast modes (CPU and CUDA) are as they were afterwards. A module that raises
    inside its autocast region never runs its `_exit_autocast`: autocast would stay on, and
    whatever runs next would compute in another precision (DIF-13)."""
    grad, nesting = torch.is_grad_enabled(), _autocast_nesting()
    autocast = [(d, torch.is_autocast_enabled(d), torch.get_autocast_dtype(d))
                for d in _AUTOCAST_DEVICES]  # fmt: skip
    try:
        yield
    finally:
        torch.set_grad_enabled(grad)
        for device, enabled, dtype in autocast:
            torch.set_autocast_enabled(device, enabled)
            torch.set_autocast_dtype(device, dtype)
        for _ in range(_autocast_nesting() - nesting):
            torch.autocast_decrement_nesting()
        torch.clear_autocast_cache()


def _autocast_nesting() -> int:
    """How many autocast regions are open (torch reads it only by changing it)."""
    level = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return level


def compare_runs(
    original: Callable[..., Any],
    transformed: Callable[..., Any],
    inputs: Sequence[Any],
    label: str,
    caller_grad: bool = True,
) -> Verdict:
    """Run both; Violated with the first difference (outputs, then inputs after the call, then
    the original's state after the call, then the grad mode after), Unknown when the original
    itself fails (CHK-6)."""
    label = f" {label}" if label else ""
    names = held_tensors(original)
    expected = run(original, inputs, caller_grad, names)
    if isinstance(expected, str):
        return Unknown(f"CHK-6: the original module raised {expected}{label}")
    found = run(transformed, inputs, caller_grad, names)
    if isinstance(found, str):
        return Violated(f"CHK-6: the transformed module raised {found}{label}")
    pairs = (("output", expected.outputs, found.outputs), ("input", expected.inputs, found.inputs))
    for kind, want, got in pairs:
        if len(want) != len(got):
            return Violated(f"CHK-6: {len(got)} {kind}s instead of {len(want)}{label}")
        for k, (a, b) in enumerate(zip(want, got, strict=True)):
            agreed = agreement(a, b)
            if isinstance(agreed, Violated):
                after = " after the call" if kind == "input" else ""
                return Violated(f"CHK-6: {kind} {k}{after}{label}: {agreed.witness}")
    for name, a, b in zip(names, expected.state, found.state, strict=True):
        agreed = _state_agreement(a, b, name in expected.written)
        if isinstance(agreed, Violated):
            return Violated(f"CHK-6: state {name} after the call{label}: {agreed.witness}")
    if found.grad_mode != expected.grad_mode:
        return Violated(f"CHK-6: grad mode {found.grad_mode} after the call instead of "
                        f"{expected.grad_mode}{label}")  # fmt: skip
    return HOLDS


def _state_agreement(a: torch.Tensor | None, b: torch.Tensor | None, written: bool) -> Verdict:
    """Whether the transformed module's state tensor `b` is the original's `a` after the call:
    Violated when they differ, or when the original wrote it and the transformed module holds
    no such tensor."""
    if a is not None and b is None and written:
        return Violated("the original writes it; the transformed module holds no such tensor")
    return HOLDS if a is None or b is None else agreement(a, b)


def clone(value: Any) -> Any:
    """A copy of a tensor input (its `requires_grad` kept); other values as they are."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def agreement(a: Any, b: Any) -> Verdict:
    """HOLDS when `b` is close to `a`, else Violated saying why (CHK-16: the dtype's rtol; its
    atol times the largest magnitude of `a`, at least 1)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return HOLDS if type(a) is type(b) and a == b else Violated(f"{b!r} instead of {a!r}")
    if a.requires_grad != b.requires_grad:
        return Violated(f"requires_grad {b.requires_grad} instead of {a.requires_grad}")
    if _identical(a, b):  # most inputs after the call: nothing wrote them
        return HOLDS
    try:
        rtol, atol = tolerance(a)
        torch.testing.assert_close(b, a, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as e:
        lines = [line.strip() for line in str(e).splitlines()]
        kept = [ln for ln in lines if ln.startswith(_MESSAGE_LINES)]
        return Violated("; ".join(ln.removesuffix(".") for ln in kept or lines[:1]))
    return HOLDS


def _identical(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit for bit the same values, dtype, shape and device (NaNs aside: `assert_close` says)."""
    same = a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
    return same and a.layout == torch.strided and bool(torch.equal(a.detach(), b.detach()))


_DEFAULTS = {  # assert_close's defaults: (rtol, atol)
    torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7), torch.complex64: (1.3e-6, 1e-5), torch.complex128: (1e-7, 1e-7),
}  # fmt: skip
_TF32 = torch.float16  # TF32 keeps float16's 10-bit mantissa: its rtol is float16's (CHK-19)


def tolerance(expected: torch.Tensor) -> tuple[float, float]:
    """`(rtol, atol)` for comparing with `expected` (CHK-16, CHK-19), for its dtype and device
    and, on CUDA, torch's TF32 flags as they are set now; exact for integers and bools."""
    if expected.dtype not in _DEFAULTS:
        return 0.0, 0.0
    finite = expected.detach().abs()
    finite = finite[torch.isfinite(finite)]
    scale = max(1.0, float(finite.max())) if finite.numel() else 1.0
    on_cuda = expected.device.type == "cuda"
    return tolerance_for(expected.dtype, on_cuda, on_cuda and tf32_in_use(), scale)


def tolerance_for(
    dtype: torch.dtype, on_cuda: bool, tf32: bool, scale: float
) -> tuple[float, float]:
    """The rule (CHK-19): rtol is `assert_close`'s for the precision the value was computed in
    (float32 and complex64 on CUDA with TF32 on: TF32's, float16's rtol); atol is that
    precision's default times `scale` (CHK-16) on the CPU, and at least rtol times `scale` on
    CUDA, whose kernels reassociate sums (split-K, atomics), so a value near zero after
    cancellation carries the rounding of its largest terms."""
    if dtype not in _DEFAULTS:
        return 0.0, 0.0
    single = dtype in (torch.float32, torch.complex64)
    rtol, atol = _DEFAULTS[_TF32 if single and on_cuda and tf32 else dtype]
    if on_cuda:
        atol = max(atol, rtol)
    return rtol, atol * scale


def tf32_in_use() -> bool:
    """Whether torch computes float32 in TF32 on CUDA: cuBLAS matmuls
    (`torch.backends.cuda.matmul.allow_tf32`, set by `torch.set_float32_matmul_precision`
    "high" or "medium") or cuDNN convolutions (`torch.backends.cudnn.allow_tf32`, on by
    default); which output went through which kernel is not known here (CHK-19)."""
    matmul = torch.get_float32_matmul_precision() != "highest"
    return bool(matmul or torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32)
