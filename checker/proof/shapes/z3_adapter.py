"""The one module that imports z3: a thin typed wrapper (SHP chapter, specs/07-shapes.md).

z3 ships no types, so mypy sees it as `Any`; every `Any` stays inside this file. Callers build
`Term`s through a `Session` (one z3 context and one solver with a per-query timeout) and the
free functions below, then ask `Session.check()` for a `CheckResult`. The *meaning* of torch's
operators (floor division, Python modulo, truncation, ...) is not here: `encoding` builds it
from these primitives, so the wrapper stays small enough to trust. SHP-8.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any, cast

import z3


class Sort(Enum):
    """The three z3 sorts fxoracle uses."""

    INT = "int"
    REAL = "real"
    BOOL = "bool"


class CheckResult(Enum):
    """What z3 said about the asserted formulas."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True, eq=False)
class Term:
    """A z3 expression and its sort. Only this module looks at `ref`."""

    sort: Sort
    ref: object


Value = int | Fraction | bool


def _z(term: Term) -> Any:
    return cast(Any, term.ref)


def _sort_of(ref: Any) -> Sort:
    if z3.is_bool(ref):
        return Sort.BOOL
    return Sort.INT if z3.is_int(ref) else Sort.REAL


def _wrap(ref: Any) -> Term:
    return Term(_sort_of(ref), cast(object, ref))


class Session:
    """One z3 context and one solver; a fresh session per query keeps queries independent."""

    def __init__(self, timeout_ms: int) -> None:
        assert timeout_ms > 0, "SHP-8: the timeout must be positive"
        self._ctx: Any = z3.Context()
        self._solver: Any = z3.Solver(ctx=self._ctx)
        self._solver.set("timeout", timeout_ms)

    def int_var(self, name: str) -> Term:
        return _wrap(z3.Int(name, self._ctx))

    def int_val(self, value: int) -> Term:
        return _wrap(z3.IntVal(value, self._ctx))

    def rational_val(self, value: Fraction) -> Term:
        return _wrap(z3.Q(value.numerator, value.denominator, self._ctx))

    def bool_val(self, value: bool) -> Term:
        return _wrap(z3.BoolVal(value, self._ctx))

    def assert_that(self, condition: Term) -> None:
        """Add `condition` to the solver (mutates the session)."""
        assert condition.sort is Sort.BOOL, "SHP-5: only booleans can be asserted"
        self._solver.add(_z(condition))

    def push(self) -> None:
        self._solver.push()

    def pop(self) -> None:
        self._solver.pop()

    def check(self) -> CheckResult:
        result = self._solver.check()
        if result == z3.sat:
            return CheckResult.SAT
        return CheckResult.UNSAT if result == z3.unsat else CheckResult.UNKNOWN

    def reason_unknown(self) -> str:
        """z3's reason for the last `unknown` ("timeout", "canceled", "incomplete", ...)."""
        return str(self._solver.reason_unknown())

    def model(self) -> Model:
        """The model of the last `sat` check."""
        return Model(cast(object, self._solver.model()))


@dataclass(frozen=True, slots=True, eq=False)
class Model:
    """A z3 model; values are completed (symbols z3 did not need get a default)."""

    ref: object

    def value(self, term: Term) -> Value:
        raw = cast(Any, self.ref).eval(_z(term), model_completion=True)
        if term.sort is Sort.BOOL:
            return bool(z3.is_true(raw))
        if term.sort is Sort.INT:
            return int(raw.as_long())
        return Fraction(int(raw.numerator_as_long()), int(raw.denominator_as_long()))

    def ints(self, variables: Sequence[tuple[str, Term]]) -> dict[str, int]:
        """Concrete values of integer variables, keyed by name."""
        return {name: int(self.value(term)) for name, term in variables}


# Arithmetic. Mixed INT/REAL operands are promoted to REAL explicitly, as Python promotes int
# to float: z3 would do it implicitly, but the sort of every term must stay known here.


def to_real(a: Term) -> Term:
    assert a.sort is not Sort.BOOL, "SHP-1: a boolean is not a number"
    return a if a.sort is Sort.REAL else _wrap(z3.ToReal(_z(a)))


def _same_sort(a: Term, b: Term) -> tuple[Any, Any]:
    if a.sort is b.sort:
        return _z(a), _z(b)
    return _z(to_real(a)), _z(to_real(b))


def add(a: Term, b: Term) -> Term:
    x, y = _same_sort(a, b)
    return _wrap(x + y)


def sub(a: Term, b: Term) -> Term:
    x, y = _same_sort(a, b)
    return _wrap(x - y)


def mul(a: Term, b: Term) -> Term:
    x, y = _same_sort(a, b)
    return _wrap(x * y)


def neg(a: Term) -> Term:
    return _wrap(-_z(a))


def real_div(a: Term, b: Term) -> Term:
    """Exact division over the rationals; z3 leaves `x / 0` uninterpreted."""
    return _wrap(_z(to_real(a)) / _z(to_real(b)))


def euclid_div(a: Term, b: Term) -> Term:
    """SMT-LIB integer `div`: Euclidean, so it is floor division only when `b > 0`."""
    assert a.sort is Sort.INT and b.sort is Sort.INT, "SHP-2: div needs integers"
    return _wrap(_z(a) / _z(b))


def euclid_mod(a: Term, b: Term) -> Term:
    """SMT-LIB integer `mod`: always in [0, |b|), unlike Python's `%` for `b < 0`."""
    assert a.sort is Sort.INT and b.sort is Sort.INT, "SHP-3: mod needs integers"
    return _wrap(_z(a) % _z(b))


def floor(a: Term) -> Term:
    """The greatest integer <= a (z3 `to_int`); identity on integers."""
    return a if a.sort is Sort.INT else _wrap(z3.ToInt(_z(a)))


def power(base: Term, exponent: Term) -> Term:
    """Integer power with a symbolic exponent; callers must assert `exponent >= 1`."""
    assert base.sort is Sort.INT and exponent.sort is Sort.INT, "SHP-1: integer power only"
    return _wrap(_z(base) ** _z(exponent))


def ite(condition: Term, then: Term, otherwise: Term) -> Term:
    assert condition.sort is Sort.BOOL, "SHP-1: an if-then-else needs a boolean condition"
    if then.sort is Sort.BOOL or otherwise.sort is Sort.BOOL:
        assert then.sort is otherwise.sort, "SHP-1: if-then-else branches of different kinds"
        return _wrap(z3.If(_z(condition), _z(then), _z(otherwise)))
    x, y = _same_sort(then, otherwise)
    return _wrap(z3.If(_z(condition), x, y))


# Relations and connectives.


def _compare(a: Term, b: Term) -> tuple[Any, Any]:
    if a.sort is Sort.BOOL or b.sort is Sort.BOOL:
        assert a.sort is b.sort, "SHP-1: cannot compare a boolean with a number"
        return _z(a), _z(b)
    return _same_sort(a, b)


def eq(a: Term, b: Term) -> Term:
    x, y = _compare(a, b)
    return _wrap(x == y)


def ne(a: Term, b: Term) -> Term:
    x, y = _compare(a, b)
    return _wrap(x != y)


def lt(a: Term, b: Term) -> Term:
    x, y = _same_sort(a, b)
    return _wrap(x < y)


def le(a: Term, b: Term) -> Term:
    x, y = _same_sort(a, b)
    return _wrap(x <= y)


def gt(a: Term, b: Term) -> Term:
    return lt(b, a)


def ge(a: Term, b: Term) -> Term:
    return le(b, a)


def _booleans(terms: Sequence[Term]) -> list[Any]:
    assert terms, "SHP-1: a connective needs at least one operand"
    assert all(t.sort is Sort.BOOL for t in terms), "SHP-1: connectives need booleans"
    return [_z(t) for t in terms]


def and_(terms: Sequence[Term]) -> Term:
    return _wrap(z3.And(*_booleans(terms)))


def or_(terms: Sequence[Term]) -> Term:
    return _wrap(z3.Or(*_booleans(terms)))


def not_(a: Term) -> Term:
    return _wrap(z3.Not(*_booleans([a])))
