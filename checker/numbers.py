"""Numbers agree: the original and the transformed module give close outputs, and leave their
inputs in close states, on the same inputs (spec chapter 06, CHK-6 and CHK-13).

Inputs are the caller's `example_inputs`, else built from the original's placeholder metadata
with a seeded generator: random tensors of the recorded shape, dtype, device and
`requires_grad` (contiguous), SymInts replaced by their hints. A dynamic graph also runs at a
second size: every symbol moved by +1 (then +2, then -1) when the ShapeEnv's ranges and facts
allow it. Each module runs on
clones, after reseeding torch's global generator, so random ops and in-place updates compare.
Tolerance: `torch.testing.assert_close`'s defaults for the dtype (float32: rtol 1.3e-6, atol
1e-5; exact for integers and bools), NaN equal to NaN. This module touches torch objects, so
`Any` appears where they cross its edge.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping, Sequence
from typing import Any

import sympy
import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._pytree import tree_leaves

from checker.shape_check import find_shape_env, meta_value
from checker.shapes import ShapeFacts, as_sympy
from checker.verdict import Holds, Unknown, Verdict, Violated

SEED = 0
SHIFTS = (1, 2, -1)  # tried in order for the second size of a dynamic graph
# the lines of assert_close's message a witness keeps
_MESSAGE_LINES = ("Expected", "Absolute difference", "Greatest absolute", "The values for")

Assignment = Mapping[sympy.Symbol, int]
Run = tuple[list[Any], list[Any]]  # (output leaves, inputs after the call)


class _NoInputs(Exception):
    """The inputs cannot be built (unbacked symbol, meta or CUDA device without CUDA, ...)."""


def check_numbers(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    example_inputs: Sequence[Any] | None,
) -> Verdict:
    """Run both modules on the same inputs and compare every output and input (CHK-6)."""
    try:
        runs = _input_sets(original, example_inputs)
    except _NoInputs as e:
        return Unknown(f"CHK-6: {e}")
    for label, inputs in runs:
        verdict = compare_runs(original, transformed, inputs, label)
        if not isinstance(verdict, Holds):
            return verdict
    return Holds()


def _input_sets(
    original: torch.fx.GraphModule, example_inputs: Sequence[Any] | None
) -> list[tuple[str, tuple[Any, ...]]]:
    if example_inputs is not None:
        for value in example_inputs:
            _check_runnable(value)
        return [("on the example inputs", tuple(example_inputs))]
    metas = [meta_value(n) for n in original.graph.nodes if n.op == "placeholder"]
    env = find_shape_env([original])
    assignments = [] if env is None else symbol_assignments(metas, env)
    if not assignments:
        return [("on random inputs", build_inputs(metas, {}, 0))]
    found = []
    for k, values in enumerate(assignments):
        at = ", ".join(f"{s.name}={v}" for s, v in sorted(values.items(), key=_by_name))
        found.append((f"on random inputs at {at}", build_inputs(metas, values, k)))
    return found


def _by_name(item: tuple[sympy.Symbol, int]) -> str:
    return str(item[0].name)


def _check_runnable(value: Any) -> None:
    if isinstance(value, FakeTensor) or (isinstance(value, torch.Tensor) and value.is_meta):
        raise _NoInputs("an example input is a fake or meta tensor: nothing to run")
    if isinstance(value, torch.Tensor) and value.is_cuda and not torch.cuda.is_available():
        raise _NoInputs("CUDA inputs and torch.cuda.is_available() is false")


def symbol_assignments(metas: Sequence[Any], env: Any) -> list[dict[sympy.Symbol, int]]:
    """The hints of the inputs' symbols, then one shifted assignment the facts allow (CHK-13)."""
    symbols = sorted(_free_symbols(metas), key=lambda s: str(s.name))
    hints: dict[sympy.Symbol, int] = {}
    for symbol in symbols:
        hint = env.backed_var_to_val.get(symbol)
        if not isinstance(hint, sympy.Integer):
            raise _NoInputs(f"symbol {symbol} has no hint (unbacked)")
        hints[symbol] = int(hint)
    if not symbols:
        return []
    facts = ShapeFacts.from_shape_env(env)
    for shift in SHIFTS:
        shifted = {s: v + shift for s, v in hints.items()}
        if _allowed(shifted, facts):
            return [hints, shifted]
    return [hints]


def _free_symbols(metas: Sequence[Any]) -> set[sympy.Symbol]:
    found: set[sympy.Symbol] = set()
    for meta in metas:
        for leaf in tree_leaves(meta):
            for size in _sizes_of(leaf):
                found |= as_sympy(size).free_symbols
    return found


def _sizes_of(leaf: Any) -> tuple[Any, ...]:
    if isinstance(leaf, torch.Tensor):
        return tuple(leaf.shape)
    if isinstance(leaf, torch.SymInt | int) and not isinstance(leaf, bool):
        return (leaf,)
    return ()


def _allowed(values: Assignment, facts: ShapeFacts) -> bool:
    """Every symbol within its range and every fact evaluating to true at `values`."""
    for symbol, value in values.items():
        bounds = facts.range_of(str(symbol.name))
        if (bounds.lower is not None and value < bounds.lower) or (
            bounds.upper is not None and value > bounds.upper
        ):
            return False
    mapping = {s: sympy.Integer(v) for s, v in values.items()}
    try:
        return all(fact.xreplace(mapping) is sympy.true for fact in facts.assumptions)
    except (ArithmeticError, AssertionError, TypeError, ValueError):
        return False


def build_inputs(metas: Sequence[Any], values: Assignment, index: int) -> tuple[Any, ...]:
    """One input per placeholder: random tensors (seeded by `index`), ints for sizes."""
    generator = torch.Generator().manual_seed(SEED + index)
    return tuple(_input(k, meta, values, generator) for k, meta in enumerate(metas))


def _evaluate(size: Any, values: Assignment) -> int:
    if type(size) is int:
        return size
    mapping = {s: sympy.Integer(v) for s, v in values.items()}
    found = as_sympy(size).xreplace(mapping)
    if not isinstance(found, sympy.Integer):
        raise _NoInputs(f"size {size} does not evaluate to an integer")
    return int(found)


def _input(k: int, meta: Any, values: Assignment, generator: torch.Generator) -> Any:
    if isinstance(meta, torch.SymInt | int) and not isinstance(meta, bool):
        return _evaluate(meta, values)
    if not isinstance(meta, torch.Tensor):
        raise _NoInputs(f"input {k} has no tensor or size metadata ({type(meta).__name__})")
    if meta.device.type not in ("cpu", "cuda") or meta.is_meta:
        raise _NoInputs(f"input {k} lives on {meta.device}")
    if meta.device.type == "cuda" and not torch.cuda.is_available():
        raise _NoInputs(f"input {k} is on CUDA and torch.cuda.is_available() is false")
    shape = [_evaluate(s, values) for s in meta.shape]
    return random_like(meta, shape, generator)


def random_like(meta: torch.Tensor, shape: Sequence[int], generator: torch.Generator) -> Any:
    """A seeded random contiguous tensor of `shape` with `meta`'s dtype, device and
    requires_grad: normal floats, bools, small non-negative integers (safe as indices)."""
    if meta.dtype.is_floating_point or meta.dtype.is_complex:
        made = torch.randn(list(shape), dtype=meta.dtype, generator=generator)
        return made.to(meta.device).requires_grad_(bool(meta.requires_grad))
    if meta.dtype == torch.bool:
        return torch.randint(0, 2, list(shape), generator=generator).bool().to(meta.device)
    made = torch.randint(0, 4, list(shape), generator=generator)
    return made.to(meta.dtype).to(meta.device)


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

    One intra-op thread: reductions add in one order, and tiny ops do not wait on busy cores.
    fx prints a failing module's generated code to stderr; the witness keeps one line instead.
    """
    clones = [_clone(v) for v in inputs]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]), contextlib.redirect_stderr(io.StringIO()):
            torch.manual_seed(SEED)
            result = gm(*clones)
    except Exception as e:  # the module under test failed: report, never raise
        text = str(e).strip().splitlines()
        return f"{type(e).__name__}: {text[0] if text else ''}"
    finally:
        torch.set_num_threads(threads)
    return list(tree_leaves(result)), clones


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def differ(a: Any, b: Any) -> str | None:
    """Why `b` is not close to `a`, or None (tolerance: assert_close defaults, CHK-13)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return None if type(a) is type(b) and a == b else f"{b!r} instead of {a!r}"
    if a.requires_grad != b.requires_grad:
        return f"requires_grad {b.requires_grad} instead of {a.requires_grad}"
    try:
        torch.testing.assert_close(b, a, equal_nan=True)
    except AssertionError as e:
        lines = [line.strip() for line in str(e).splitlines()]
        kept = [ln for ln in lines if ln.startswith(_MESSAGE_LINES)]
        return "; ".join(kept or lines[:1])
    return None
