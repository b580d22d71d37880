"""Numbers: the transformed module computes what the original computes (CHK-6), and torch's
runtime runs it (CHK-17) (spec chapter 06).

CHK-6 runs the original and the transformed module *with every `invoke_subgraph` call inlined*
(`checker.proof.inline_calls`: the meaning of the call, not torch's eager runtime for it) on the
same inputs (`checker.proof.number_inputs`: the example inputs first), and compares every output
and every input after the call. CHK-17 runs the transformed module as it is, through torch's
runtime, on the first input set: a failure there, or other numbers, with CHK-6 holding, is
torch's runtime's and the verdict is Unknown naming the op; an operand the runtime does not take
is CHK-1's (RPL-21). Each module runs on clones, after reseeding torch's global generator, so
random ops and in-place updates compare. Tolerance (CHK-16): `torch.testing.assert_close`'s
rtol for the dtype, and its atol scaled by the largest magnitude of the expected tensor (at
least 1); exact for integers and bools; NaN equals NaN. This module touches torch objects, so
`Any` appears where they cross its edge.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Hashable, Sequence
from typing import Any

import torch
import torch.fx
from torch.utils._pytree import tree_leaves

from checker.io.threads import one_thread
from checker.proof.inline_calls import inline_calls
from checker.proof.number_inputs import SEED, InputSets, NoInputs, input_sets
from checker.proof.on_cpu import moved_to_cpu
from checker.proof.verdict import Holds, Unknown, Verdict, Violated
from reference.bodies import body_key
from reference.errors import describe
from reference.names import INVOKE

# the lines of assert_close's message a witness keeps
_MESSAGE_LINES = ("Expected", "Absolute difference", "Greatest absolute", "The values for")
Run = tuple[list[Any], list[Any]]  # (output leaves, inputs after the call)
CPU_NOTE = "run on the CPU: the graph's metadata is on CUDA and there is no CUDA device here"


def check_numbers(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    example_inputs: Sequence[Any] | None,
) -> Verdict:
    """Run the original and the inlined transformed module on the same inputs and compare
    every output and input (CHK-6)."""
    try:
        found = input_sets(original, example_inputs)
        pair = _modules(original, _inlined(transformed), found)
    except NoInputs as e:
        return Unknown(f"CHK-6: {e}")
    with one_thread():
        for label, inputs in found.sets:
            verdict = compare_runs(*pair, inputs, label)
            if not isinstance(verdict, Holds):
                return verdict
    return Holds(CPU_NOTE if found.on_cpu else "")


def check_runtime(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    example_inputs: Sequence[Any] | None,
) -> Verdict:
    """torch's own `invoke_subgraph` runtime runs every subgraph of the transformed module and
    returns what its body computes (CHK-17). Each distinct call goes through the runtime once,
    on the first input set: a subgraph's first call, unless an earlier call had a body of the
    same structure (`reference.bodies.body_key`) and operands of the same metadata, which the
    runtime treats alike (torch's eager runtime retraces the body on every call: once per
    distinct call keeps the check's cost that of the graph); a failure, or other numbers or
    `requires_grad` flags than the body's, is torch's runtime's, and the verdict is Unknown."""
    if not any(n.target is INVOKE for n in transformed.graph.nodes):
        return Holds()
    try:
        found = input_sets(original, example_inputs)
        module = _modules(original, transformed, found)[1]
    except NoInputs as e:
        return Unknown(f"CHK-17: {e}")
    label, inputs = found.sets[0]
    probe = _RuntimeProbe(module)
    try:
        with torch.random.fork_rng(devices=[]), contextlib.redirect_stderr(io.StringIO()), \
                one_thread():  # fmt: skip
            torch.manual_seed(SEED)
            probe.run(*[_clone(v) for v in inputs])
    except Exception as e:  # told, never raised
        where = "" if probe.current is None else f" at {probe.current.name}"
        return Unknown(f"CHK-17: the transformed module raised {describe(e)}{where} {label}")
    if probe.problem:
        return Unknown(f"CHK-17: torch's invoke_subgraph runtime {probe.problem} {label}")
    return Holds(CPU_NOTE if found.on_cpu else "")


def _inlined(transformed: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The transformed module with its calls inlined; a module too malformed to inline (CHK-1
    says why) runs as it is, so that its failure is shown as CHK-6's witness."""
    try:
        return inline_calls(transformed)
    except Exception:  # a malformed call: running the module itself tells how it fails
        return transformed


def _modules(
    original: torch.fx.GraphModule, transformed: torch.fx.GraphModule, found: InputSets
) -> tuple[torch.fx.GraphModule, torch.fx.GraphModule]:
    if found.on_cpu:
        return moved_to_cpu(original), moved_to_cpu(transformed)
    return original, transformed


class _RuntimeProbe(torch.fx.Interpreter):
    """Runs a module; each distinct call (body structure, operand metadata) goes through
    torch's runtime once and is compared with the body run directly; other calls run the body
    directly."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__(gm)
        self.current: torch.fx.Node | None = None
        self.bodies: dict[str, Hashable] = {}  # subgraph identifier -> its body's structure
        self.seen: set[Hashable] = set()  # (body structure, operand metadata) already probed
        self.problem = ""

    def run_node(self, n: torch.fx.Node) -> Any:
        self.current = n
        return super().run_node(n)

    def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
        if target is not INVOKE:
            return super().call_function(target, args, kwargs)
        body, identifier, *operands = args
        before = torch.random.get_rng_state()  # both runs draw the same random numbers
        direct = tuple(body(*[_clone(o) for o in operands]))
        if identifier not in self.bodies:
            self.bodies[identifier] = body_key(body)
        probe = (self.bodies[identifier], tuple(_operand_form(o) for o in operands))
        if probe in self.seen or self.problem:
            return direct
        self.seen.add(probe)
        after = torch.random.get_rng_state()
        torch.random.set_rng_state(before)
        try:
            ran = tuple(INVOKE(body, identifier, *operands))
        except Exception as e:  # torch's runtime failed: the verdict names it
            at = self.current.name if self.current is not None else "?"
            self.problem = f"raised {describe(e)} at {at} ({identifier})"
            torch.random.set_rng_state(after)
            return direct
        for k, (want, got) in enumerate(zip(direct, ran, strict=False)):
            problem = differ(want, got)
            if problem is not None:
                self.problem = f"returns {problem} for output {k} of {identifier}"
        if not self.problem and not torch.equal(torch.random.get_rng_state(), after):
            self.problem = f"draws other random numbers than the body of {identifier}"
        return ran


def compare_runs(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    inputs: Sequence[Any],
    label: str,
) -> Verdict:
    """Run both on clones of `inputs`; compare outputs, then the inputs after the calls."""
    expected = _run(original, inputs)
    if isinstance(expected, str):
        return Unknown(f"CHK-6: the original module raised {expected} {label}")
    found = _run(transformed, inputs)
    if isinstance(found, str):
        return Violated(f"CHK-6: the transformed module raised {found} {label}")
    for kind, want, got in (("output", expected[0], found[0]), ("input", expected[1], found[1])):
        if len(want) != len(got):
            return Violated(f"CHK-6: {len(got)} {kind}s instead of {len(want)} {label}")
        for k, (a, b) in enumerate(zip(want, got, strict=True)):
            problem = differ(a, b)
            if problem is not None:
                after = " after the call" if kind == "input" else ""
                return Violated(f"CHK-6: {kind} {k}{after} {label}: {problem}")
    return Holds()


def _run(gm: torch.fx.GraphModule, inputs: Sequence[Any]) -> Run | str:
    """(output leaves, inputs after the call), or the exception's one-line description.

    fx prints a failing module's generated code to stderr; the witness keeps one line instead.
    """
    clones = [_clone(v) for v in inputs]
    try:
        with torch.random.fork_rng(devices=[]), contextlib.redirect_stderr(io.StringIO()):
            torch.manual_seed(SEED)
            result = gm(*clones)
    except Exception as e:  # the module under test failed: report, never raise
        return describe(e)
    return list(tree_leaves(result)), clones


def _operand_form(value: Any) -> Hashable:
    """What the runtime sees of an operand besides its values."""
    if isinstance(value, torch.Tensor):
        return (value.dtype, tuple(value.shape), value.stride(), value.device, value.requires_grad)
    return (type(value).__qualname__, repr(value))


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def differ(a: Any, b: Any) -> str | None:
    """Why `b` is not close to `a`, or None (CHK-16: the dtype's rtol; its atol times the
    largest magnitude of `a`, at least 1)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return None if type(a) is type(b) and a == b else f"{b!r} instead of {a!r}"
    if a.requires_grad != b.requires_grad:
        return f"requires_grad {b.requires_grad} instead of {a.requires_grad}"
    try:
        rtol, atol = tolerance(a)
        torch.testing.assert_close(b, a, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as e:
        lines = [line.strip() for line in str(e).splitlines()]
        kept = [ln for ln in lines if ln.startswith(_MESSAGE_LINES)]
        return "; ".join(kept or lines[:1])
    return None


_DEFAULTS = {  # assert_close's defaults: (rtol, atol)
    torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7), torch.complex64: (1.3e-6, 1e-5), torch.complex128: (1e-7, 1e-7),
}  # fmt: skip


def tolerance(expected: torch.Tensor) -> tuple[float, float]:
    """`(rtol, atol)` for comparing with `expected` (CHK-16); exact for integers and bools."""
    if expected.dtype not in _DEFAULTS:
        return 0.0, 0.0
    rtol, atol = _DEFAULTS[expected.dtype]
    finite = expected.detach().abs()
    finite = finite[torch.isfinite(finite)]
    scale = max(1.0, float(finite.max())) if finite.numel() else 1.0
    return rtol, atol * scale
