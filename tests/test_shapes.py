"""prove_equal and prove_sizes_equal on real ShapeEnv facts (SHP chapter, specs/07-shapes.md).

One `torch.compile(..., dynamic=True)` capture gives symbolic sizes, strides, replacements,
guards and divisibility facts; the tests ask the checker about them and check every Violated
witness by substituting its model into both sides with sympy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

import pytest
import sympy
import torch
import torch.utils._sympy.functions as tf
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from checker import z3_adapter as z
from checker.shapes import (
    NO_FACTS,
    ShapeFacts,
    SizeLike,
    SymbolRange,
    as_sympy,
    prove_equal,
    prove_sizes_equal,
    z3_value_at,
)
from checker.verdict import Holds, Unknown, Verdict, Violated
from reference.errors import FxOracleError

# torch's Max, Min and CeilDiv are untyped constructors; typed aliases keep mypy --strict quiet.
Max = cast("Callable[..., sympy.Basic]", tf.Max)
Min = cast("Callable[..., sympy.Basic]", tf.Min)
CeilDiv = cast("Callable[..., sympy.Basic]", tf.CeilDiv)


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


def assert_separates(verdict: Verdict, lhs: SizeLike, rhs: SizeLike) -> None:
    """A Violated model, substituted into both sides with sympy, gives different values."""
    assert isinstance(verdict, Violated), verdict
    left, right = as_sympy(lhs), as_sympy(rhs)
    names = sorted(s.name for s in left.free_symbols | right.free_symbols)
    assert [name for name, _ in verdict.model] == names
    values = {s: sympy.Integer(dict(verdict.model)[s.name]) for s in left.free_symbols}
    values |= {s: sympy.Integer(dict(verdict.model)[s.name]) for s in right.free_symbols}
    assert left.xreplace(values) != right.xreplace(values)


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


# Unknown is never a pass: unsupported operators, timeouts, vacuous facts.

s, t, u = sympy.symbols("s t u", integer=True)


@pytest.mark.spec("SHP-7")
@pytest.mark.parametrize(
    ("expr", "operator"),
    [
        (sympy.sin(s), "sin"),
        (sympy.Function("Foo")(s), "Foo"),
        (sympy.sqrt(s), "Pow with exponent 1/2"),
        (2**s, "Pow with exponent s"),
        (tf.OpaqueUnaryFn_log2(s), "OpaqueUnaryFn_log2"),
        (s + sympy.oo, "Infinity"),
        (sympy.Symbol("f", real=True, integer=False), "non-integer symbol f"),
    ],
)
def test_unsupported_operator_is_unknown_naming_it(expr: sympy.Basic, operator: str) -> None:
    """B10's crashes (`unhandled operator`) become Unknown with the operator's name."""
    assert prove_equal(expr, s) == Unknown(f"SHP-7: unsupported operator {operator}")
    assert z3_value_at(expr, {"s": 1, "f": 1}) == Unknown(f"SHP-7: unsupported operator {operator}")


@pytest.mark.spec("SHP-7")
def test_facts_z3_cannot_encode_never_yield_a_false_violation() -> None:
    """A model that may break an unencoded fact is Unknown; one sympy confirms stays Violated."""
    opaque = ShapeFacts((), (sympy.Eq(sympy.Function("Foo")(s), 1),))
    verdict = prove_equal(s, t, opaque)
    assert isinstance(verdict, Unknown) and verdict.reason.startswith("SHP-7")
    checkable = ShapeFacts((), (sympy.Ge(2**s, s + 1),))  # sympy evaluates it at the model
    assert_separates(prove_equal(s, 3, checkable), s, 3)


@pytest.mark.spec("SHP-8")
def test_tiny_timeout_on_a_hard_query_does_not_crash() -> None:
    """Cubes: whatever z3 answers in 1 ms, a Violated model must separate the sides."""
    lhs, rhs = s**3 + t**3, u**3
    verdict = prove_equal(lhs, rhs, ShapeFacts((SymbolRange("s", 1, None),)), timeout_ms=1)
    if isinstance(verdict, Violated):
        assert_separates(verdict, lhs, rhs)
    else:
        assert isinstance(verdict, Unknown) and verdict.reason.startswith("SHP-8")


@pytest.mark.spec("SHP-8")
def test_a_query_z3_cannot_settle_is_unknown() -> None:
    """Under s^3 + t^3 == u^3 (no positive solution, Fermat), is s == t? z3 cannot tell."""
    positive = tuple(SymbolRange(name, 1, None) for name in "stu")
    fermat = ShapeFacts(positive, (sympy.Eq(s**3 + t**3, u**3),))
    verdict = prove_equal(s, t, fermat, timeout_ms=200)
    assert isinstance(verdict, Unknown), verdict
    assert verdict.reason.startswith(("SHP-8", "SHP-10"))


@pytest.mark.spec("SHP-10")
def test_contradictory_facts_do_not_prove_anything() -> None:
    """s == t under s < 0 (s's range is [0, oo)), or a quotient by a divisor fixed at 0."""
    negative = ShapeFacts((), (sympy.Lt(s, 0),))
    assert prove_equal(s, t, negative) == Unknown(
        "SHP-10: the facts and definedness conditions contradict each other"
    )
    zero_divisor = ShapeFacts((), (sympy.Eq(t, 0),))
    verdict = prove_equal(tf.FloorDiv(s, t), 0, zero_divisor)
    assert isinstance(verdict, Unknown) and verdict.reason.startswith("SHP-10")


@pytest.mark.spec("SHP-5")
def test_divisors_are_assumed_nonzero() -> None:
    """s // t * t + s % t == s holds: t == 0 is outside the domain, not a counterexample."""
    assert prove_equal(tf.FloorDiv(s, t) * t + tf.PythonMod(s, t), s) == Holds()


# torch 2.13's validator bugs (B10-B12), seen from our side.


@pytest.mark.spec("SHP-4")
def test_trunc_is_not_floor_b11() -> None:
    """B11: TruncToInt(ToFloat(s)/2) differs from floor exactly at negative odd s."""
    bounds = ShapeFacts((SymbolRange("s", -10, 10),))
    trunc, floor = tf.TruncToInt(tf.ToFloat(s) / 2), tf.FloorToInt(tf.ToFloat(s) / 2)
    verdict = prove_equal(trunc, floor, bounds)
    assert_separates(verdict, trunc, floor)
    assert isinstance(verdict, Violated)
    ((_, value),) = verdict.model
    assert value < 0 and value % 2 == 1
    assert z3_value_at(trunc, {"s": -3}) == -1


@pytest.mark.spec("SHP-2", "SHP-3")
def test_negative_divisors_use_python_semantics_b12() -> None:
    """B12: with a = 1, b = -2 Python gives 1 % -2 == -1 (SMT's Euclidean mod gives 1)."""
    assert z3_value_at(tf.PythonMod(s, t), {"s": 1, "t": -2}) == -1
    assert z3_value_at(tf.FloorDiv(s, t), {"s": 1, "t": -2}) == -1
    signed = ShapeFacts((SymbolRange("t", -5, 5),))
    assert prove_equal(tf.FloorDiv(s, t) * t + tf.PythonMod(s, t), s, signed) == Holds()
    assert_separates(prove_equal(tf.PythonMod(s, t), sympy.Abs(tf.PythonMod(s, t)), signed),
                     tf.PythonMod(s, t), sympy.Abs(tf.PythonMod(s, t)))  # fmt: skip


@pytest.mark.spec("SHP-1", "SHP-3")
def test_operators_torch_cannot_translate_are_proved_b10() -> None:
    """B10: ModularIndexing, Where, Abs, Piecewise and Identity have meanings here."""
    assert prove_equal(tf.ModularIndexing(s, 1, 4), tf.PythonMod(s, 4)) == Holds()
    assert prove_equal(tf.Where(sympy.Ge(s, t), s, t), Max(s, t)) == Holds()
    assert prove_equal(sympy.Abs(s - t), Max(s - t, t - s)) == Holds()
    piecewise = sympy.Piecewise((s, sympy.Lt(s, t)), (t, True))
    assert prove_equal(piecewise, Min(s, t)) == Holds()
    assert prove_equal(tf.Identity(s * t), t * s) == Holds()


@pytest.mark.spec("SHP-11")
def test_true_division_is_exact() -> None:
    """IntTrueDiv(s, 3) * 3 == s over the rationals; Float constants are exact binary values."""
    assert prove_equal(tf.IntTrueDiv(s, 3) * 3, s) == Holds()
    assert prove_equal(tf.ToFloat(s) * sympy.Float(0.5), tf.IntTrueDiv(s, 2)) == Holds()
    assert z3_value_at(sympy.Float(0.1) * s, {"s": 1}) == Fraction(0.1)


@pytest.mark.spec("SHP-9")
def test_verdicts_are_deterministic() -> None:
    """The same query gives the same verdict and the same model."""
    first = prove_equal(s * t, s + t)
    assert first == prove_equal(s * t, s + t)
    assert_separates(first, s * t, s + t)


# The typed wrapper and bad input.


@pytest.mark.spec("SHP-8")
def test_adapter_checks_and_extracts_models() -> None:
    """Session.check returns a typed result; the model comes back as plain ints."""
    session = z.Session(timeout_ms=1000)
    a, b = session.int_var("a"), session.int_var("b")
    session.assert_that(z.eq(z.add(a, b), session.int_val(7)))
    session.assert_that(z.gt(a, session.int_val(5)))
    session.assert_that(z.ge(b, session.int_val(0)))
    assert session.check() is z.CheckResult.SAT
    assert session.model().ints([("a", a), ("b", b)]) in ({"a": 7, "b": 0}, {"a": 6, "b": 1})
    session.assert_that(z.lt(a, session.int_val(6)))
    assert session.check() is z.CheckResult.UNSAT


@pytest.mark.spec("SHP-7")
def test_bad_input_is_an_fxoracle_error() -> None:
    """Strings, non-positive timeouts, a condition against a number, a missing value."""
    with pytest.raises(FxOracleError, match="expected an int"):
        prove_equal(cast(int, "s0"), 1)
    with pytest.raises(FxOracleError, match="timeout_ms"):
        prove_equal(s, t, timeout_ms=0)
    with pytest.raises(FxOracleError, match="condition"):
        prove_equal(sympy.Lt(s, t), s)
    with pytest.raises(FxOracleError, match="no value"):
        z3_value_at(s + t, {"s": 1})
