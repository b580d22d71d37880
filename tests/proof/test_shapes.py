"""prove_equal on sympy expressions of plain symbols (SHP chapter, specs/07-shapes.md).

Unknown is never a pass (unsupported operators, timeouts, facts z3 cannot encode, vacuous
facts); torch's validator bugs B10-B12 seen from our side; the typed z3 wrapper and bad
input. Every Violated witness is checked by substituting its model into both sides with sympy
(`assert_separates`). The proofs on the sizes of a real capture are in
`tests/proof/test_shapes_captured.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import cast

import pytest
import sympy
import torch.utils._sympy.functions as tf

from checker.proof.shapes import z3_adapter as z
from checker.proof.shapes.prove import (
    ShapeFacts,
    SizeLike,
    SymbolRange,
    as_sympy,
    prove_equal,
    z3_value_at,
)
from checker.proof.verdict import Holds, Unknown, Verdict, Violated
from reference.errors import FxOracleError

# torch's Max, Min and CeilDiv are untyped constructors; typed aliases keep mypy --strict quiet.
Max = cast("Callable[..., sympy.Basic]", tf.Max)
Min = cast("Callable[..., sympy.Basic]", tf.Min)
CeilDiv = cast("Callable[..., sympy.Basic]", tf.CeilDiv)


def assert_separates(verdict: Verdict, lhs: SizeLike, rhs: SizeLike) -> None:
    """A Violated model, substituted into both sides with sympy, gives different values."""
    assert isinstance(verdict, Violated), verdict
    left, right = as_sympy(lhs), as_sympy(rhs)
    names = sorted(s.name for s in left.free_symbols | right.free_symbols)
    assert [name for name, _ in verdict.model] == names
    values = {s: sympy.Integer(dict(verdict.model)[s.name]) for s in left.free_symbols}
    values |= {s: sympy.Integer(dict(verdict.model)[s.name]) for s in right.free_symbols}
    assert left.xreplace(values) != right.xreplace(values)


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


# torch's validator bugs (B10-B12), seen from our side.


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
