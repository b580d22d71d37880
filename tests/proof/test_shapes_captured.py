"""prove_equal and prove_sizes_equal on real ShapeEnv facts (SHP chapter, specs/07-shapes.md).

One `torch.compile(..., dynamic=True)` capture gives symbolic sizes, strides, replacements,
guards and divisibility facts; the tests ask the checker about them and check every Violated
witness by substituting its model into both sides with sympy.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import sympy
import torch
import torch.utils._sympy.functions as tf
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from checker.proof.shapes.prove import (
    NO_FACTS,
    ShapeFacts,
    SizeLike,
    SymbolRange,
    as_sympy,
    prove_equal,
    prove_sizes_equal,
    z3_value_at,
)
from checker.proof.verdict import Holds, Unknown, Violated
from tests.proof.test_shapes import Max, assert_separates


@dataclass(frozen=True, slots=True)
class Capture:
    """The sizes and the ShapeEnv of one dynamic-shape capture of `_sample`."""

    shape_env: ShapeEnv
    x: torch.Size  # (s0, s1)
    flat: torch.Size  # x.view(-1): (s0*s1,)
    pairs: torch.Size  # z.view(-1, 2): (s3 // 2, 2), with s3 % 2 == 0 and s3 > 5
    strided: tuple[int | torch.SymInt, ...]  # x[::2].stride(): (2*s1, 1)


def _sample(
    x: torch.Tensor, y: torch.Tensor, z: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    flat = x.view(-1) + y
    pairs = z.view(-1, 2)
    if z.size(0) > 5:
        pairs = pairs * 2
    return flat, pairs, x[::2]


@pytest.fixture(scope="module")
def capture() -> Capture:
    found: dict[str, object] = {}

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
        tracing = torch._guards.TracingContext.get()
        assert tracing.fake_mode is not None and tracing.fake_mode.shape_env is not None
        found["env"] = tracing.fake_mode.shape_env
        for node in gm.graph.nodes:
            found[node.name] = node.meta.get("example_value")
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(_sample, backend=backend, dynamic=True, fullgraph=True)
    compiled(torch.randn(2, 3), torch.randn(6), torch.randn(8))
    torch._dynamo.reset()

    def tensor(name: str) -> torch.Tensor:
        value = found[name]
        assert isinstance(value, torch.Tensor)
        return value

    env = found["env"]
    assert isinstance(env, ShapeEnv)
    x, getitem = tensor("l_x_"), tensor("getitem")
    return Capture(
        env, x.shape, tensor("view").shape, tensor("pairs").shape, tuple(getitem.stride()),
    )  # fmt: skip


def symbol(expr: SizeLike) -> sympy.Symbol:
    result = as_sympy(expr)
    assert isinstance(result, sympy.Symbol)
    return result


# Proofs on the captured sizes.


@pytest.mark.spec("SHP-1")
def test_flattened_size_is_the_product_of_the_sizes(capture: Capture) -> None:
    """x.view(-1) has s0*s1 elements: equal to s1*s0 and to (s0 + 1)*s1 - s1."""
    s0, s1 = capture.x
    assert prove_equal(capture.flat[0], s1 * s0) == Holds()
    expanded = (as_sympy(s0) + 1) * as_sympy(s1) - as_sympy(s1)
    assert expanded != as_sympy(capture.flat[0])  # not structurally equal: z3 proves it
    facts = ShapeFacts.from_shape_env(capture.shape_env)
    assert prove_equal(capture.flat[0], expanded, facts) == Holds()
    assert prove_equal(capture.flat[0], expanded) == Holds()


@pytest.mark.spec("SHP-2")
def test_floor_division_of_a_double_is_the_symbol(capture: Capture) -> None:
    """FloorDiv(2*s0, 2) == s0, built unevaluated so that sympy cannot simplify it first."""
    s0 = as_sympy(capture.x[0])
    assert prove_equal(tf.FloorDiv(2 * s0, 2, evaluate=False), s0) == Holds()
    assert prove_equal(tf.FloorDiv(2 * s0 + 1, 2, evaluate=False), s0) == Holds()
    assert_separates(prove_equal(tf.FloorDiv(s0, 2, evaluate=False), s0), s0 // 2, s0)


@pytest.mark.spec("SHP-9")
def test_different_symbols_are_violated_with_a_model(capture: Capture) -> None:
    """s0 vs s1 and s0 + 1 vs s0: Violated, and the model really separates the sides."""
    s0, s1 = capture.x
    facts = ShapeFacts.from_shape_env(capture.shape_env)
    for lhs, rhs in [(s0, s1), (s0 + 1, s0), (capture.flat[0], s0)]:
        verdict = prove_equal(lhs, rhs, facts)
        assert_separates(verdict, lhs, rhs)
        assert isinstance(verdict, Violated) and verdict.witness.startswith("SHP-9")
        assert all(value >= 2 for _, value in verdict.model)  # backed sizes are >= 2


@pytest.mark.spec("SHP-6")
def test_replacements_are_facts(capture: Capture) -> None:
    """y's size s2 is replaced by s0*s1 (x.view(-1) + y): provable only with the facts."""
    (replaced,) = capture.shape_env.replacements
    numel = capture.x[0] * capture.x[1]
    facts = ShapeFacts.from_shape_env(capture.shape_env)
    assert prove_equal(replaced, numel, facts) == Holds()
    assert_separates(prove_equal(replaced, numel), replaced, numel)


@pytest.mark.spec("SHP-6")
def test_divisibility_and_guards_are_facts(capture: Capture) -> None:
    """z.view(-1, 2) records s3 % 2 == 0 (divisible) and `z.size(0) > 5` a guard."""
    s3 = symbol(as_sympy(capture.pairs[0]).args[0])
    facts = ShapeFacts.from_shape_env(capture.shape_env)
    doubled = 2 * tf.FloorDiv(s3, 2)
    assert prove_equal(doubled, s3, facts) == Holds()
    assert_separates(prove_equal(doubled, s3), doubled, s3)
    guards_only = ShapeFacts((), facts.assumptions)  # no ranges: the guard s3 > 5 must do it
    assert prove_equal(Max(s3, 6), s3, guards_only) == Holds()
    assert_separates(prove_equal(Max(s3, 6), s3), Max(s3, 6), s3)


@pytest.mark.spec("SHP-6")
def test_ranges_come_from_var_to_range(capture: Capture) -> None:
    """Backed sizes are >= 2 in the ShapeEnv; without facts a symbol is only >= 0."""
    s0 = symbol(capture.x[0])
    facts = ShapeFacts.from_shape_env(capture.shape_env)
    assert facts.range_of(s0.name) == SymbolRange(s0.name, 2, None)
    assert NO_FACTS.range_of(s0.name) == SymbolRange(s0.name, 0, None)
    assert prove_equal(Max(s0, 2), s0, facts) == Holds()
    verdict = prove_equal(Max(s0, 2), s0)
    assert_separates(verdict, Max(s0, 2), s0)
    assert isinstance(verdict, Violated) and dict(verdict.model)[s0.name] in (0, 1)


@pytest.mark.spec("SHP-6")
def test_hints_satisfy_the_encoded_facts(capture: Capture) -> None:
    """The values torch traced with satisfy every fact as z3 encodes it."""
    facts = ShapeFacts.from_shape_env(capture.shape_env)
    hints = {s.name: int(v) for s, v in capture.shape_env.backed_var_to_val.items()}
    assert len(facts.assumptions) >= 3
    for fact in facts.assumptions:
        assert z3_value_at(fact, hints) is True, fact
    for bounds in facts.ranges:
        assert bounds.lower is not None and bounds.lower <= hints[bounds.name]


@pytest.mark.spec("SHP-12")
def test_sizes_and_strides_dimension_by_dimension(capture: Capture) -> None:
    """Same rank and equal dims hold; one differing dim is named; a rank mismatch is Violated."""
    facts = ShapeFacts.from_shape_env(capture.shape_env)
    s3 = symbol(as_sympy(capture.pairs[0]).args[0])
    s1 = as_sympy(capture.x[1])
    assert prove_sizes_equal(capture.pairs, (tf.FloorDiv(s3, 2), 2), facts) == Holds()
    assert prove_sizes_equal(capture.strided, (2 * s1, 1), facts) == Holds()
    verdict = prove_sizes_equal(capture.pairs, (s3, 2), facts)
    assert isinstance(verdict, Violated) and verdict.witness.startswith("SHP-12: dim 0: SHP-9")
    assert_separates(verdict, capture.pairs[0], s3)
    assert prove_sizes_equal(capture.pairs, (s3,), facts) == Violated("SHP-12: 2 dimensions vs 1")
    assert isinstance(prove_sizes_equal([sympy.sin(s3)], [s3]), Unknown)
