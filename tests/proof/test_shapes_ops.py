"""Each encoded operator against Python's own arithmetic (SHP chapter, specs/07-shapes.md).

z3's value of the encoded expression, with every symbol pinned to a concrete integer
(`z3_value_at`), must equal what Python computes with `//`, `%`, `math.trunc`, `round`, `max`,
... on the same integers, including negative operands and divisors of both signs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

import pytest
import sympy
import torch.utils._sympy.functions as tf
from hypothesis import given
from hypothesis import strategies as st

from checker.proof.shapes.prove import z3_value_at
from checker.proof.verdict import Unknown

# torch's Max, Min and CeilDiv are untyped constructors; typed aliases keep mypy --strict quiet.
Max = cast("Callable[..., sympy.Basic]", tf.Max)
Min = cast("Callable[..., sympy.Basic]", tf.Min)
CeilDiv = cast("Callable[..., sympy.Basic]", tf.CeilDiv)

x, y, w = sympy.symbols("x y w", integer=True)
operands = st.integers(-60, 60)
divisors = st.integers(-9, 9).filter(lambda d: d != 0)


def value(expr: sympy.Basic, a: int, b: int = 0, c: int = 0) -> object:
    """z3's value of `expr` at x=a, y=b, w=c (only the symbols `expr` uses are pinned)."""
    return z3_value_at(expr, {"x": a, "y": b, "w": c})


@dataclass(frozen=True, slots=True)
class DivisionCase:
    """A division-like operator on (x, y) and Python's meaning of it on (a, b), b != 0."""

    name: str
    expr: sympy.Basic
    python: Callable[[int, int], object]


DIVISION_CASES = (
    DivisionCase("FloorDiv", tf.FloorDiv(x, y), lambda a, b: a // b),
    DivisionCase("CleanDiv", tf.CleanDiv(x, y), lambda a, b: a // b),
    DivisionCase("PythonMod", tf.PythonMod(x, y), lambda a, b: a % b),
    DivisionCase("Mod", tf.Mod(x, y), lambda a, b: a % b),
    DivisionCase("sympy.Mod", sympy.Mod(x, y), lambda a, b: a % b),
    DivisionCase("sympy.floor", sympy.floor(x / y), lambda a, b: a // b),
    DivisionCase("IntTrueDiv", tf.IntTrueDiv(x, y), Fraction),
    DivisionCase("FloatTrueDiv", tf.FloatTrueDiv(tf.ToFloat(x), tf.ToFloat(y)), Fraction),
    DivisionCase(
        "TruncToInt", tf.TruncToInt(tf.IntTrueDiv(x, y)), lambda a, b: math.trunc(Fraction(a, b))
    ),
    DivisionCase(
        "TruncToFloat",
        tf.TruncToFloat(tf.IntTrueDiv(x, y)),
        lambda a, b: math.trunc(Fraction(a, b)),
    ),
    DivisionCase(
        "FloorToInt", tf.FloorToInt(tf.IntTrueDiv(x, y)), lambda a, b: math.floor(Fraction(a, b))
    ),
    DivisionCase(
        "CeilToInt", tf.CeilToInt(tf.IntTrueDiv(x, y)), lambda a, b: math.ceil(Fraction(a, b))
    ),
    DivisionCase("sympy.ceiling", sympy.ceiling(x / y), lambda a, b: math.ceil(Fraction(a, b))),
    DivisionCase(
        "RoundToInt", tf.RoundToInt(tf.IntTrueDiv(x, y)), lambda a, b: round(Fraction(a, b))
    ),
)


@pytest.mark.spec("SHP-2", "SHP-3", "SHP-4", "SHP-11")
@pytest.mark.parametrize("case", DIVISION_CASES, ids=lambda case: case.name)
@given(a=operands, b=divisors)
def test_division_like_operators_match_python(case: DivisionCase, a: int, b: int) -> None:
    """Floor division rounds to -oo, modulo takes the divisor's sign, truncation goes to zero,
    round is half-to-even, true division is exact: for every sign of both operands."""
    assert value(case.expr, a, b) == case.python(a, b)


@pytest.mark.spec("SHP-2", "SHP-3", "SHP-5")
@pytest.mark.parametrize("case", DIVISION_CASES, ids=lambda case: case.name)
@given(a=operands)
def test_zero_divisor_is_undefined(case: DivisionCase, a: int) -> None:
    """Where Python raises ZeroDivisionError the encoding has no value: Unknown, not a number."""
    result = value(case.expr, a, 0)
    assert isinstance(result, Unknown)
    assert result.reason.startswith("SHP-5")


@pytest.mark.spec("SHP-4")
@given(a=operands)
def test_trunc_of_half_is_toward_zero(a: int) -> None:
    """B11's scenario: TruncToInt(ToFloat(x)/2) at x = -3 is -1 (Python), not -2 (floor)."""
    assert value(tf.TruncToInt(tf.ToFloat(x) / 2), a) == math.trunc(a / 2)
    assert value(tf.FloorToInt(tf.ToFloat(x) / 2), a) == math.floor(a / 2)


@pytest.mark.spec("SHP-2")
@given(a=operands, b=st.integers(1, 9))
def test_ceil_div_rounds_up_for_positive_divisors(a: int, b: int) -> None:
    """torch's CeilDiv(a, b) builds FloorDiv(a + b - 1, b): a ceiling only for b > 0."""
    assert value(CeilDiv(x, y), a, b) == -(-a // b)


@pytest.mark.spec("SHP-3", "SHP-5")
@given(a=operands, b=divisors, c=divisors)
def test_modular_indexing_is_defined_where_c_and_python_agree(a: int, b: int, c: int) -> None:
    """ModularIndexing(a, b, c) = (a // b) % c where a // b >= 0 and c > 0; undefined elsewhere."""
    result = value(tf.ModularIndexing(x, y, w), a, b, c)
    if a // b >= 0 and c > 0:
        assert result == (a // b) % c
    else:
        assert isinstance(result, Unknown)


@pytest.mark.spec("SHP-1")
@given(a=operands, b=operands, c=operands)
def test_lattice_and_abs_match_python(a: int, b: int, c: int) -> None:
    """torch's and sympy's Max/Min (any arity) and Abs."""
    assert value(Max(x, y, w), a, b, c) == max(a, b, c)
    assert value(Min(x, y, w), a, b, c) == min(a, b, c)
    assert value(sympy.Max(x, y), a, b) == max(a, b)
    assert value(sympy.Min(x, y), a, b) == min(a, b)
    assert value(sympy.Abs(x - y), a, b) == abs(a - b)


@pytest.mark.spec("SHP-1")
@given(a=operands, b=operands, c=operands)
def test_polynomials_match_python(a: int, b: int, c: int) -> None:
    """Add, Mul and Pow with natural exponents are exact, with no 64-bit wrap-around."""
    assert value(3 * x**3 - 2 * x * y + w**2 - 7, a, b, c) == 3 * a**3 - 2 * a * b + c**2 - 7
    assert value(x**5 * y**4 * w**3, a, b, c) == a**5 * b**4 * c**3


@pytest.mark.spec("SHP-1", "SHP-5")
@given(a=st.integers(-5, 5), n=st.integers(0, 6))
def test_pow_by_natural_matches_python(a: int, n: int) -> None:
    """PowByNatural with a symbolic exponent (0 ** 0 == 1 as in Python); negative: undefined."""
    assert value(tf.PowByNatural(x, y), a, n) == a**n
    assert isinstance(value(tf.PowByNatural(x, y), a, -n - 1), Unknown)


@pytest.mark.spec("SHP-5", "SHP-11")
@given(a=st.integers(-9, 9), n=st.integers(1, 3))
def test_negative_power_is_exact_and_needs_a_nonzero_base(a: int, n: int) -> None:
    """x ** -n is the exact rational 1 / x ** n; undefined at x = 0."""
    result = value(x ** (-n), a)
    if a == 0:
        assert isinstance(result, Unknown)
    else:
        assert result == Fraction(1, a**n)


@pytest.mark.spec("SHP-1")
@given(a=operands, b=operands, c=operands)
def test_relations_and_connectives_match_python(a: int, b: int, c: int) -> None:
    """Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not and the boolean constants."""
    relations = [
        (sympy.Eq(x, y), a == b),
        (sympy.Ne(x, y), a != b),
        (sympy.Lt(x, y), a < b),
        (sympy.Le(x, y), a <= b),
        (sympy.Gt(x, y), a > b),
        (sympy.Ge(x, y), a >= b),
    ]
    for relation, expected in relations:
        assert value(relation, a, b) is expected
    both = sympy.And(sympy.Lt(x, y), sympy.Not(sympy.Eq(y, w)))
    assert value(both, a, b, c) is (a < b and b != c)
    either = sympy.Or(sympy.Lt(x, y), sympy.Eq(y, w))
    assert value(either, a, b, c) is (a < b or b == c)
    assert value(sympy.true, 0) is True


@pytest.mark.spec("SHP-1", "SHP-5")
@given(a=operands, b=operands, c=operands)
def test_where_and_piecewise_match_python(a: int, b: int, c: int) -> None:
    """Where and Piecewise pick the first true branch; without a catch-all, no branch: undefined."""
    assert value(tf.Where(sympy.Lt(x, y), x, w), a, b, c) == (a if a < b else c)
    total = sympy.Piecewise((x, sympy.Lt(x, y)), (y, sympy.Lt(y, w)), (w, True))
    assert value(total, a, b, c) == (a if a < b else b if b < c else c)
    partial = sympy.Piecewise((x, sympy.Lt(x, y)), (y, sympy.Lt(y, w)))
    expected: object = a if a < b else b if b < c else None
    result = value(partial, a, b, c)
    assert result == expected if expected is not None else isinstance(result, Unknown)


@pytest.mark.spec("SHP-1", "SHP-11")
@given(a=operands)
def test_identity_and_to_float(a: int) -> None:
    """Identity is transparent; ToFloat keeps the exact value (as a rational)."""
    assert value(tf.Identity(x + 1), a) == a + 1
    assert value(tf.ToFloat(x) * sympy.Rational(1, 3), a) == Fraction(a, 3)
