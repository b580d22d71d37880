"""The inputs the numbers obligations run on (spec chapter 06, CHK-6, CHK-13, CHK-16).

First the captured example inputs: the graph's own placeholders' values (parameters, buffers,
index tensors and lifted scalars at their real values). A dynamic graph also runs at a second
size: every size symbol moved by +1 (then +2, then -1) when the ShapeEnv's ranges and facts
allow it; there, a placeholder whose shape does not change keeps its example value, a float
tensor of the new shape is random, and an integer or bool tensor of the new shape draws its
values from the example's (so indices stay in range). Without example inputs, every input is
built from the placeholder's metadata (seeded random tensors, SymInts at their hints). A graph
whose metadata lives on CUDA runs on the CPU when there is no CUDA device (`on_cpu`); the
verdict says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import sympy
import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._pytree import tree_leaves

from checker.io.inputs import random_like
from checker.proof.shapes.check import find_shape_env
from checker.proof.shapes.prove import ShapeFacts, as_sympy
from reference.fx_helpers import example_value

SEED = 0
SHIFTS = (1, 2, -1)  # tried in order for the second size of a dynamic graph

Assignment = Mapping[sympy.Symbol, int]


class NoInputs(Exception):
    """The inputs cannot be built (unbacked symbol, meta device, no metadata, ...)."""


@dataclass(frozen=True, slots=True)
class InputSets:
    """Labelled input tuples, and whether the modules must first be moved to the CPU."""

    sets: tuple[tuple[str, tuple[Any, ...]], ...]
    on_cpu: bool = False


def input_sets(original: torch.fx.GraphModule, example_inputs: Sequence[Any] | None) -> InputSets:
    """The example inputs first, then a second size for a dynamic graph (CHK-13)."""
    metas = [example_value(n) for n in original.graph.nodes if n.op == "placeholder"]
    on_cpu = _cuda_without_cuda(metas, example_inputs)
    env = find_shape_env([original])
    assignments = [] if env is None else symbol_assignments(metas, env)
    if example_inputs is not None and any(_is_meta(v) for v in example_inputs):
        raise NoInputs("an example input is on the meta device: it has no values to run on")
    if example_inputs is not None and _runnable(example_inputs) and not on_cpu:
        sets = [("on the example inputs", tuple(example_inputs))]
        for values in assignments[1:]:
            made = derived_inputs(metas, values, tuple(example_inputs))
            sets.append((f"on inputs derived from the examples at {_at(values)}", made))
        return InputSets(tuple(sets))
    device = "cpu" if on_cpu else None
    if not assignments:
        return InputSets((("on random inputs", build_inputs(metas, {}, 0, device)),), on_cpu)
    built = (build_inputs(metas, values, k, device) for k, values in enumerate(assignments))
    labels = (f"on random inputs at {_at(values)}" for values in assignments)
    return InputSets(tuple(zip(labels, built, strict=True)), on_cpu)


def _at(values: Assignment) -> str:
    return ", ".join(f"{s.name}={v}" for s, v in sorted(values.items(), key=_by_name))


def _cuda_without_cuda(metas: Sequence[Any], example_inputs: Sequence[Any] | None) -> bool:
    """Some metadata or example input is on CUDA, and there is no CUDA device here."""
    if torch.cuda.is_available():
        return False
    leaves = [*tree_leaves(list(metas)), *tree_leaves(list(example_inputs or ()))]
    return any(isinstance(v, torch.Tensor) and v.device.type == "cuda" for v in leaves)


def _runnable(values: Sequence[Any]) -> bool:
    """No fake tensor among them (a capture under FakeTensorMode: built from metadata)."""
    return not any(isinstance(v, FakeTensor) for v in values)


def _is_meta(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and not isinstance(value, FakeTensor) and value.is_meta


def _by_name(item: tuple[sympy.Symbol, int]) -> str:
    return str(item[0].name)


def symbol_assignments(metas: Sequence[Any], env: Any) -> list[dict[sympy.Symbol, int]]:
    """The hints of the inputs' symbols, then one shifted assignment the facts allow (CHK-13)."""
    symbols = sorted(_free_symbols(metas), key=lambda s: str(s.name))
    hints: dict[sympy.Symbol, int] = {}
    for symbol in symbols:
        hint = env.backed_var_to_val.get(symbol)
        if not isinstance(hint, sympy.Integer):
            raise NoInputs(f"symbol {symbol} has no hint (unbacked)")
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


def build_inputs(
    metas: Sequence[Any], values: Assignment, index: int, device: str | None = None
) -> tuple[Any, ...]:
    """One input per placeholder: random tensors (seeded by `index`), ints for sizes; on
    `device` when given, else on the metadata's."""
    generator = torch.Generator().manual_seed(SEED + index)
    return tuple(_input(k, meta, values, generator, device) for k, meta in enumerate(metas))


def derived_inputs(
    metas: Sequence[Any], values: Assignment, examples: tuple[Any, ...]
) -> tuple[Any, ...]:
    """Inputs at another size: what keeps its shape keeps its example value (parameters,
    buffers, scalars); a resized float tensor is random, a resized integer or bool tensor takes
    values drawn from its example's, so that indices stay valid (CHK-13)."""
    generator = torch.Generator().manual_seed(SEED + 1)
    found: list[Any] = []
    for meta, example in zip(metas, examples, strict=True):
        if isinstance(meta, torch.SymInt | int) and not isinstance(meta, bool):
            found.append(_evaluate(meta, values))
        elif (
            isinstance(meta, torch.Tensor) and isinstance(example, torch.Tensor) and _resizes(meta)
        ):
            shape = [_evaluate(s, values) for s in meta.shape]
            found.append(_resized(meta, example, shape, generator))
        else:
            found.append(example)
    return tuple(found)


def _resizes(meta: Any) -> TypeGuard[torch.Tensor]:
    """A tensor with a symbolic size: it takes another shape at another size."""
    return isinstance(meta, torch.Tensor) and any(type(s) is not int for s in meta.shape)


def _resized(
    meta: torch.Tensor, example: torch.Tensor, shape: list[int], generator: torch.Generator
) -> Any:
    if meta.dtype.is_floating_point or meta.dtype.is_complex or example.numel() == 0:
        return random_like(meta, shape, generator, example.device)
    pool = example.detach().flatten()
    picks = torch.randint(0, pool.numel(), shape, generator=generator)
    return pool.cpu()[picks].to(example.device)


def _evaluate(size: Any, values: Assignment) -> int:
    if type(size) is int:
        return size
    mapping = {s: sympy.Integer(v) for s, v in values.items()}
    found = as_sympy(size).xreplace(mapping)
    if not isinstance(found, sympy.Integer):
        raise NoInputs(f"size {size} does not evaluate to an integer")
    return int(found)


def _input(
    k: int, meta: Any, values: Assignment, generator: torch.Generator, device: str | None
) -> Any:
    if isinstance(meta, torch.SymInt | int) and not isinstance(meta, bool):
        return _evaluate(meta, values)
    if not isinstance(meta, torch.Tensor):
        raise NoInputs(f"input {k} has no tensor or size metadata ({type(meta).__name__})")
    if meta.device.type not in ("cpu", "cuda") or meta.is_meta:
        raise NoInputs(f"input {k} lives on {meta.device}")
    shape = [_evaluate(s, values) for s in meta.shape]
    return random_like(meta, shape, generator, device)


def inputs_or_why(
    original: torch.fx.GraphModule, example_inputs: Sequence[Any] | None
) -> InputSets | NoInputs:
    """`input_sets`, or why there are none (CHK-6 and CHK-17 share one set)."""
    try:
        return input_sets(original, example_inputs)
    except NoInputs as e:
        return e
