"""Shape expressions in z3: are two symbolic sizes equal? (SHP chapter, specs/07-shapes.md)

One query of `prove_equal(lhs, rhs, facts)`:
  1. both sides become sympy (`int`, `torch.SymInt` through `.node.expr`); identical ones hold;
  2. `_Encoder` turns sympy into z3 terms with Python's semantics; every partial operator adds
     its definedness condition (a divisor is non-zero, SHP-5) and anything outside the encoded
     fragment raises `_Unsupported` (SHP-7);
  3. the facts (ShapeEnv ranges, replacements, guards, divisibility, SHP-6) and the symbol
     ranges are asserted, then `lhs != rhs` is checked:
     unsat -> `Holds` once the facts are shown satisfiable (SHP-10); sat -> `Violated` with a
     model that separates the sides (SHP-9); unknown or a timeout -> `Unknown` (SHP-8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias, cast

import sympy
import torch
import torch.utils._sympy.functions as tf
from sympy.logic.boolalg import BooleanAtom
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from checker import z3_adapter as z
from checker.verdict import Holds, Unknown, Verdict, Violated
from reference.errors import FxOracleError

SizeLike: TypeAlias = int | torch.SymInt | torch.SymBool | sympy.Basic


@dataclass(frozen=True, slots=True)
class SymbolRange:
    """Inclusive bounds of an integer symbol; `None` is unbounded. SHP-6."""

    name: str
    lower: int | None
    upper: int | None


@dataclass(frozen=True, slots=True)
class ShapeFacts:
    """What is known about the symbols: ranges and boolean sympy assumptions. SHP-6.

    A symbol without a range is an integer >= 0 (a size); the empty `ShapeFacts()` says only that.
    """

    ranges: tuple[SymbolRange, ...] = ()
    assumptions: tuple[sympy.Basic, ...] = ()

    @classmethod
    def from_shape_env(cls, shape_env: ShapeEnv) -> ShapeFacts:
        """Ranges from `var_to_range`; replacements, guards, runtime asserts and `divisible`."""
        ranges = tuple(
            SymbolRange(symbol.name, _bound(vr.lower), _bound(vr.upper))
            for symbol, vr in sorted(shape_env.var_to_range.items(), key=lambda kv: kv[0].name)
            if vr.is_int
        )
        replaced = [
            sympy.Eq(symbol, value, evaluate=False)
            for symbol, value in sorted(shape_env.replacements.items(), key=lambda kv: kv[0].name)
        ]
        asserts = [
            runtime_assert.expr
            for key in sorted(shape_env.deferred_runtime_asserts, key=str)
            for runtime_assert in shape_env.deferred_runtime_asserts[key]
        ]
        divisible = [
            sympy.Eq(mod, 0, evaluate=False)
            for mod in sorted(shape_env.divisible, key=sympy.default_sort_key)
        ]
        guards = [guard.expr for guard in shape_env.guards]
        assumptions = dict.fromkeys([*replaced, *guards, *asserts, *divisible])
        return cls(ranges, tuple(assumptions))

    def range_of(self, name: str) -> SymbolRange:
        """The range recorded for `name`, else the default of a size: [0, oo)."""
        return next((r for r in self.ranges if r.name == name), SymbolRange(name, 0, None))


NO_FACTS = ShapeFacts()


def _bound(value: sympy.Basic) -> int | None:
    return int(value) if isinstance(value, sympy.Integer) else None


class _Unsupported(Exception):
    """An operator outside the encoded fragment; it becomes `Unknown` (SHP-7)."""


def _name(expr: sympy.Basic) -> str:
    return type(expr).__name__


class _Encoder:
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
        raise _Unsupported(_name(expr))

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
        raise _Unsupported(_name(expr))

    def _symbol(self, symbol: sympy.Symbol) -> z.Term:
        name = cast(str, symbol.name)
        if symbol.is_integer is False:
            raise _Unsupported(f"non-integer symbol {name}")
        if name not in self.symbols:
            self.symbols[name] = self.session.int_var(name)
        return self.symbols[name]

    def _pow(self, base: sympy.Basic, exponent: sympy.Basic) -> z.Term:
        if not isinstance(exponent, sympy.Integer):
            raise _Unsupported(f"Pow with exponent {exponent}")
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
            except _Unsupported:
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

Handler = Callable[[_Encoder, Sequence[z.Term]], z.Term]


def _is_int(*terms: z.Term) -> bool:
    return all(t.sort is z.Sort.INT for t in terms)


def _floordiv(enc: _Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b = args
    enc.require(z.ne(b, enc.const(0)))
    if not _is_int(a, b):
        return z.to_real(z.floor(z.real_div(a, b)))  # float // float is a float
    positive = z.gt(b, enc.const(0))
    return z.ite(positive, z.euclid_div(a, b), z.euclid_div(z.neg(a), z.neg(b)))


def _python_mod(enc: _Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b = args
    enc.require(z.ne(b, enc.const(0)))
    if not _is_int(a, b):
        return z.sub(a, z.mul(b, z.floor(z.real_div(a, b))))
    positive = z.gt(b, enc.const(0))
    return z.ite(positive, z.euclid_mod(a, b), z.neg(z.euclid_mod(z.neg(a), z.neg(b))))


def _modular_indexing(enc: _Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b, c = args
    quotient = _floordiv(enc, [a, b])
    # (a // b) % c with "C modulus": defined only where C's and Python's % agree
    enc.require(z.and_([z.ge(quotient, enc.const(0)), z.gt(c, enc.const(0))]))
    return _python_mod(enc, [quotient, c])


def _truediv(enc: _Encoder, args: Sequence[z.Term]) -> z.Term:
    a, b = args
    enc.require(z.ne(b, enc.const(0)))
    return z.real_div(a, b)


def _trunc(enc: _Encoder, x: z.Term) -> z.Term:
    """Toward zero, as `math.trunc` (not floor: SHP-4)."""
    if _is_int(x):
        return x
    return z.ite(z.ge(x, enc.const(0)), z.floor(x), z.neg(z.floor(z.neg(x))))


def _ceil(enc: _Encoder, x: z.Term) -> z.Term:
    return x if _is_int(x) else z.neg(z.floor(z.neg(x)))


def _abs(enc: _Encoder, x: z.Term) -> z.Term:
    return z.ite(z.ge(x, enc.const(0)), x, z.neg(x))


def _round_half_even(enc: _Encoder, x: z.Term) -> z.Term:
    if _is_int(x):
        return x
    shifted = z.add(x, enc.session.rational_val(Fraction(1, 2)))
    nearest = z.floor(shifted)
    tie_to_odd = z.and_(
        [z.eq(nearest, shifted), z.eq(z.euclid_mod(nearest, enc.const(2)), enc.const(1))]
    )
    return z.ite(tie_to_odd, z.sub(nearest, enc.const(1)), nearest)


def _pow_by_natural(enc: _Encoder, args: Sequence[z.Term]) -> z.Term:
    base, exponent = args
    enc.require(z.ge(exponent, enc.const(0)))
    is_zero = z.eq(exponent, enc.const(0))
    return z.ite(is_zero, enc.const(1), z.power(base, exponent))


def _fold(step: Callable[[z.Term, z.Term], z.Term]) -> Handler:
    def handler(enc: _Encoder, args: Sequence[z.Term]) -> z.Term:
        result = args[0]
        for arg in args[1:]:
            result = step(result, arg)
        return result

    return handler


def _unary(step: Callable[[_Encoder, z.Term], z.Term]) -> Handler:
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


# The public proving functions.


def as_sympy(value: SizeLike) -> sympy.Basic:
    """A size, stride or condition as sympy: ints, `torch.SymInt`/`SymBool` (`.node.expr`)."""
    if isinstance(value, bool):
        return sympy.true if value else sympy.false
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, torch.SymInt | torch.SymBool):
        return value.node.expr
    if isinstance(value, sympy.Basic):
        return value
    raise FxOracleError(f"expected an int, a torch.SymInt or a sympy expression, got {value!r}")


def _checked_timeout(timeout_ms: int) -> int:
    if timeout_ms <= 0:
        raise FxOracleError(f"timeout_ms must be positive, got {timeout_ms}")
    return timeout_ms


def prove_equal(
    lhs: SizeLike, rhs: SizeLike, facts: ShapeFacts = NO_FACTS, timeout_ms: int = 2000
) -> Verdict:
    """Holds when the facts imply lhs == rhs for every value of the symbols where both sides are
    defined; Violated with the symbol values (sorted by name) where they differ; else Unknown.
    SHP-1 to SHP-11.
    """
    left, right, timeout_ms = as_sympy(lhs), as_sympy(rhs), _checked_timeout(timeout_ms)
    if left == right:  # structurally identical: equal wherever defined, no solver needed
        return Holds()
    session = z.Session(timeout_ms)
    enc = _Encoder(session)
    try:
        left_term, right_term = enc.encode(left), enc.encode(right)
    except _Unsupported as unsupported:
        return Unknown(f"SHP-7: unsupported operator {unsupported}")
    if (left_term.sort is z.Sort.BOOL) != (right_term.sort is z.Sort.BOOL):
        raise FxOracleError(f"cannot compare a condition with a number: {left} vs {right}")
    dropped = enc.assume(facts)
    session.push()
    session.assert_that(z.ne(left_term, right_term))
    match session.check():
        case z.CheckResult.SAT:
            return _violation(enc, (left, left_term), (right, right_term), dropped)
        case z.CheckResult.UNKNOWN:
            return Unknown(
                f"SHP-8: z3 answered unknown ({session.reason_unknown()}, {timeout_ms} ms)"
            )
        case z.CheckResult.UNSAT:
            session.pop()
            return _non_vacuous(session)


def _non_vacuous(session: z.Session) -> Verdict:
    """An unsat query proves nothing if the facts and conditions alone are unsat. SHP-10."""
    match session.check():
        case z.CheckResult.SAT:
            return Holds()
        case z.CheckResult.UNSAT:
            return Unknown("SHP-10: the facts and definedness conditions contradict each other")
        case z.CheckResult.UNKNOWN:
            return Unknown(f"SHP-10: z3 could not satisfy the facts ({session.reason_unknown()})")


Side = tuple[sympy.Basic, z.Term]


def _violation(enc: _Encoder, left: Side, right: Side, dropped: Sequence[sympy.Basic]) -> Verdict:
    """The z3 model as a witness, re-checked with sympy where sympy can evaluate. SHP-9."""
    model = enc.session.model()
    values = model.ints(sorted(enc.symbols.items()))
    shown = sorted(s.name for s in left[0].free_symbols | right[0].free_symbols)
    at = ", ".join(f"{name}={values[name]}" for name in shown)
    unconfirmed = [f for f in dropped if _substitute(f, values) is not sympy.true]
    if unconfirmed:
        return Unknown(f"SHP-7: a model at {at} may break facts z3 cannot encode: {unconfirmed}")
    sides = [
        (expr, model.value(term), _exact(_substitute(expr, values))) for expr, term in (left, right)
    ]
    for expr, z3_value, sympy_value in sides:
        if sympy_value is not None and sympy_value != z3_value:
            return Unknown(f"SHP-9: z3 says {expr} = {z3_value}, sympy {sympy_value} at {at}")
    (lexpr, lvalue, _), (rexpr, rvalue, _) = sides
    witness = f"SHP-9: {lexpr} = {lvalue} but {rexpr} = {rvalue} at {at}"
    return Violated(witness, tuple((name, values[name]) for name in shown))


def _substitute(expr: sympy.Basic, values: Mapping[str, int]) -> sympy.Basic | None:
    """`expr` with the symbols replaced (sympy evaluates torch's functions on numbers)."""
    mapping = {s: sympy.Integer(values[s.name]) for s in expr.free_symbols if s.name in values}
    try:
        return expr.xreplace(mapping)
    except (ArithmeticError, AssertionError, TypeError, ValueError):
        return None  # e.g. torch's Mod asserts its operands are non-negative


def _exact(value: sympy.Basic | None) -> z.Value | None:
    if isinstance(value, BooleanAtom):
        return bool(value)
    if isinstance(value, sympy.Integer):
        return int(value)
    if isinstance(value, sympy.Rational):
        return Fraction(int(value.p), int(value.q))
    return None  # symbolic, or a Float (rounded: not comparable with exact rationals)


def prove_sizes_equal(
    a: Sequence[SizeLike],
    b: Sequence[SizeLike],
    facts: ShapeFacts = NO_FACTS,
    timeout_ms: int = 2000,
) -> Verdict:
    """Sizes or strides equal dimension by dimension; different lengths are Violated. SHP-12."""
    if len(a) != len(b):
        return Violated(f"SHP-12: {len(a)} dimensions vs {len(b)}")
    unknown = []
    for dim, (x, y) in enumerate(zip(a, b, strict=True)):
        match prove_equal(x, y, facts, timeout_ms):
            case Violated(witness, model):
                return Violated(f"SHP-12: dim {dim}: {witness}", model)
            case Unknown(reason):
                unknown.append(f"dim {dim}: {reason}")
    return Unknown("SHP-12: " + "; ".join(unknown)) if unknown else Holds()


def z3_value_at(
    expr: SizeLike, values: Mapping[str, int], timeout_ms: int = 2000
) -> z.Value | Unknown:
    """z3's value of the encoded `expr` with every symbol pinned to `values[name]`.

    This is how the tests hold the encoding against Python's own `//`, `%`, `math.trunc`, ...
    Undefined at these values (a zero divisor, SHP-5) or unsupported (SHP-7) gives Unknown.
    """
    session = z.Session(_checked_timeout(timeout_ms))
    enc = _Encoder(session)
    try:
        term = enc.encode(as_sympy(expr))
    except _Unsupported as unsupported:
        return Unknown(f"SHP-7: unsupported operator {unsupported}")
    for name, variable in sorted(enc.symbols.items()):
        if name not in values:
            raise FxOracleError(f"no value given for symbol {name}")
        session.assert_that(z.eq(variable, enc.const(values[name])))
    for condition in enc.conditions:
        session.assert_that(condition)
    match session.check():
        case z.CheckResult.SAT:
            return session.model().value(term)
        case z.CheckResult.UNSAT:
            return Unknown("SHP-5: undefined at these values (a divisor is zero)")
        case z.CheckResult.UNKNOWN:
            return Unknown(f"SHP-8: z3 answered unknown ({session.reason_unknown()})")
