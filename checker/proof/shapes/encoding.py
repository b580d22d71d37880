"""Shape expressions as z3 terms: the sympy -> z3 encoder (SHP chapter,
specs/07-shapes.md). `checker.proof.shapes` asks the questions; this module says what they mean.

`Encoder` turns sympy into z3 terms with Python's semantics; every partial operator adds its
definedness condition (a divisor is non-zero, SHP-5) and anything outside the encoded fragment
raises `Unsupported` (SHP-7). The assumptions come from `checker.proof.shapes.facts` (SHP-6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TypeAlias, cast

import sympy
import torch
import torch.utils._sympy.functions as tf
from sympy.logic.boolalg import BooleanAtom

from checker.proof.shapes import z3_adapter as z
from checker.proof.shapes.facts import ShapeFacts

SizeLike: TypeAlias = int | torch.SymInt | torch.SymBool | sympy.Basic


class Unsupported(Exception):
    """An operator outside the encoded fragment; it becomes `Unknown` (SHP-7)."""


def _name(expr: sympy.Basic) -> str:
    return type(expr).__name__


class Encoder:
    """Sympy -> z3 for one query; collects the symbols and definedness conditions it meets."""

    def __init__(self, session: z.Session) -> None:
        self.session = session
        self.symbols: dict[str, z.Term] = {}
        self.conditions: list[z.Term] = []
        self._cache: dict[sympy.Basic, z.Term] = {}

    def const(self, value: int) -> z.Term:
        return self.session.int_val(value)

    def require(self, condition: z.Term) -> None:
        """Record a definedness condition (mutates the encoder). SHP-5."""
        self.conditions.append(condition)

    def encode(self, expr: sympy.Basic) -> z.Term:
        term = self._cache.get(expr)
        if term is None:
            term = self._cache[expr] = self._encode_new(expr)
        return term

    def _encode_new(self, expr: sympy.Basic) -> z.Term:
        if expr.is_Atom:
            return self._atom(expr)
        if isinstance(expr, sympy.Pow):
            return self._pow(expr.args[0], expr.args[1])
        if isinstance(expr, sympy.Piecewise):
            return self._piecewise(expr.args)
        for cls, handler in _OPERATORS:
            if isinstance(expr, cls):
                return handler(self, [self.encode(arg) for arg in expr.args])
        raise Unsupported(_name(expr))

    def _atom(self, expr: sympy.Basic) -> z.Term:
        if isinstance(expr, sympy.Symbol):
            return self._symbol(expr)
        if isinstance(expr, sympy.Integer):
            return self.const(int(expr))
        if isinstance(expr, sympy.Rational | sympy.Float) and expr.is_finite:
            exact = sympy.Rational(expr)  # a Float is its exact binary value (SHP-11)
            return self.session.rational_val(Fraction(int(exact.p), int(exact.q)))
        if isinstance(expr, BooleanAtom):
            return self.session.bool_val(bool(expr))
        raise Unsupported(_name(expr))

    def _symbol(self, symbol: sympy.Symbol) -> z.Term:
        name = cast(str, symbol.name)
        if symbol.is_integer is False:
            raise Unsupported(f"non-integer symbol {name}")
        if name not in self.symbols:
            self.symbols[name] = self.session.int_var(name)
        return self.symbols[name]

    def _pow(self, base: sympy.Basic, exponent: sympy.Basic) -> z.Term:
        if not isinstance(exponent, sympy.Integer):
            raise Unsupported(f"Pow with exponent {exponent}")
        value, count = self.encode(base), abs(int(exponent))
        result = self.const(1)
        for _ in range(count):
            result = z.mul(result, value)
        if int(exponent) >= 0:
            return result
        self.require(z.ne(value, self.const(0)))
        return z.real_div(self.const(1), result)

    def _piecewise(self, pairs: Sequence[sympy.Basic]) -> z.Term:
        encoded = [(self.encode(pair.expr), self.encode(pair.cond)) for pair in pairs]
        self.require(z.or_([cond for _, cond in encoded]))  # no matching branch: undefined
        result = encoded[-1][0]
        for value, cond in reversed(encoded[:-1]):
            result = z.ite(cond, value, result)
        return result

    def assume(self, facts: ShapeFacts) -> tuple[sympy.Basic, ...]:
        """Assert the facts and symbol ranges; return the facts z3 could not encode."""
        dropped = []
        for fact in facts.assumptions:
            try:
                self.session.assert_that(self.encode(fact))
            except Unsupported:
                dropped.append(fact)
        for condition in self.conditions:
            self.session.assert_that(condition)
        for name, term in sorted(self.symbols.items()):
            bounds = facts.range_of(name)
            if bounds.lower is not None:
                self.session.assert_that(z.ge(term, self.const(bounds.lower)))
            if bounds.upper is not None:
                self.session.assert_that(z.le(term, self.const(bounds.upper)))
        return tuple(dropped)


# Python's semantics over the z3 primitives. Integer operands use z3's Euclidean div/mod, whose
# result is Python's when the divisor is positive, and `a // b == (-a) // (-b)` otherwise: this
# stays in integer arithmetic, which z3 solves far better than ToInt(ToReal(a) / ToReal(b)).

Handler = Callable[[Encoder, Sequence[z.Term]], z.Term]


def _is_int(*terms: z.Term) -> bool:
    return all(t.sort is z.Sort.INT for t in terms)


def _floordiv(enc: Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b = args
    enc.require(z.ne(b, enc.const(0)))
    if not _is_int(a, b):
        return z.to_real(z.floor(z.real_div(a, b)))  # float // float is a float
    positive = z.gt(b, enc.const(0))
    return z.ite(positive, z.euclid_div(a, b), z.euclid_div(z.neg(a), z.neg(b)))


def _python_mod(enc: Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b = args
    enc.require(z.ne(b, enc.const(0)))
    if not _is_int(a, b):
        return z.sub(a, z.mul(b, z.floor(z.real_div(a, b))))
    positive = z.gt(b, enc.const(0))
    return z.ite(positive, z.euclid_mod(a, b), z.neg(z.euclid_mod(z.neg(a), z.neg(b))))


def _modular_indexing(enc: Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b, c = args
    quotient = _floordiv(enc, [a, b])
    # (a // b) % c with "C modulus": defined only where C's and Python's % agree
    enc.require(z.and_([z.ge(quotient, enc.const(0)), z.gt(c, enc.const(0))]))
    return _python_mod(enc, [quotient, c])


def _truediv(enc: Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b = args
    enc.require(z.ne(b, enc.const(0)))
    return z.real_div(a, b)


def _trunc(enc: Encoder, x: z.Term) -> z.Term:
    """Toward zero, as `math.trunc` (not floor: SHP-4)."""
    if _is_int(x):
        return x
    return z.ite(z.ge(x, enc.const(0)), z.floor(x), z.neg(z.floor(z.neg(x))))


def _ceil(enc: Encoder, x: z.Term) -> z.Term:
    return x if _is_int(x) else z.neg(z.floor(z.neg(x)))


def _abs(enc: Encoder, x: z.Term) -> z.Term:
    return z.ite(z.ge(x, enc.const(0)), x, z.neg(x))


def _round_half_even(enc: Encoder, x: z.Term) -> z.Term:
    if _is_int(x):
        return x
    shifted = z.add(x, enc.session.rational_val(Fraction(1, 2)))
    nearest = z.floor(shifted)
    tie_to_odd = z.and_(
        [z.eq(nearest, shifted), z.eq(z.euclid_mod(nearest, enc.const(2)), enc.const(1))]
    )
    return z.ite(tie_to_odd, z.sub(nearest, enc.const(1)), nearest)


def _pow_by_natural(enc: Encoder, args: Sequence[z.Term]) -> z.Term:
    base, exponent = args
    enc.require(z.ge(exponent, enc.const(0)))
    is_zero = z.eq(exponent, enc.const(0))
    return z.ite(is_zero, enc.const(1), z.power(base, exponent))


def _fold(step: Callable[[z.Term, z.Term], z.Term]) -> Handler:
    def handler(enc: Encoder, args: Sequence[z.Term]) -> z.Term:
        result = args[0]
        for arg in args[1:]:
            result = step(result, arg)
        return result

    return handler


def _unary(step: Callable[[Encoder, z.Term], z.Term]) -> Handler:
    return lambda enc, args: step(enc, args[0])


def _binary(step: Callable[[z.Term, z.Term], z.Term]) -> Handler:
    return lambda enc, args: step(args[0], args[1])


_MAX = _fold(lambda a, b: z.ite(z.ge(a, b), a, b))
_MIN = _fold(lambda a, b: z.ite(z.le(a, b), a, b))

_OPERATORS: tuple[tuple[type[sympy.Basic], Handler], ...] = (
    (sympy.Add, _fold(z.add)),
    (sympy.Mul, _fold(z.mul)),
    (tf.FloorDiv, _floordiv),  # CleanDiv too; CeilDiv(a, b) builds FloorDiv(a + b - 1, b)
    (tf.PythonMod, _python_mod),
    (tf.Mod, _python_mod),
    (sympy.Mod, _python_mod),
    (tf.ModularIndexing, _modular_indexing),
    (tf.PowByNatural, _pow_by_natural),
    (tf.IntTrueDiv, _truediv),
    (tf.FloatTrueDiv, _truediv),
    (tf.ToFloat, _unary(lambda enc, x: z.to_real(x))),
    (tf.TruncToInt, _unary(_trunc)),
    (tf.TruncToFloat, _unary(lambda enc, x: z.to_real(_trunc(enc, x)))),
    (tf.FloorToInt, _unary(lambda enc, x: z.floor(x))),
    (sympy.floor, _unary(lambda enc, x: z.floor(x))),
    (tf.CeilToInt, _unary(_ceil)),
    (sympy.ceiling, _unary(_ceil)),
    (tf.RoundToInt, _unary(_round_half_even)),
    (tf.Max, _MAX),
    (sympy.Max, _MAX),
    (tf.Min, _MIN),
    (sympy.Min, _MIN),
    (sympy.Abs, _unary(_abs)),
    (tf.Where, lambda enc, args: z.ite(args[0], args[1], args[2])),
    (tf.Identity, _unary(lambda enc, x: x)),
    (sympy.Eq, _binary(z.eq)),
    (sympy.Ne, _binary(z.ne)),
    (sympy.Lt, _binary(z.lt)),
    (sympy.Le, _binary(z.le)),
    (sympy.Gt, _binary(z.gt)),
    (sympy.Ge, _binary(z.ge)),
    (sympy.And, lambda enc, args: z.and_(args)),
    (sympy.Or, lambda enc, args: z.or_(args)),
    (sympy.Not, _unary(lambda enc, x: z.not_(x))),
)
