"""Shape expressions in z3: are two symbolic sizes equal? (SHP chapter, specs/07-shapes.md)

One query of `prove_equal(lhs, rhs, facts)`:
  1. both sides become sympy (`int`, `torch.SymInt` through `.node.expr`); identical ones hold;
  2. `Encoder` turns sympy into z3 terms with Python's semantics; every partial operator adds
     its definedness condition (a divisor is non-zero, SHP-5) and anything outside the encoded
     fragment raises `Unsupported` (SHP-7);
  3. the facts (ShapeEnv ranges, replacements, guards, divisibility, SHP-6) and the symbol
     ranges are asserted, then `lhs != rhs` is checked:
     unsat -> `Holds` once the facts are shown satisfiable (SHP-10); sat -> `Violated` with a
     model that separates the sides (SHP-9); unknown or a timeout -> `Unknown` (SHP-8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import sympy
import torch
from sympy.logic.boolalg import BooleanAtom

from checker.proof.shapes import z3_adapter as z
from checker.proof.shapes.encoding import Encoder, SizeLike, Unsupported
from checker.proof.shapes.facts import NO_FACTS, ShapeFacts, SymbolRange
from checker.proof.verdict import HOLDS, Unknown, Verdict, Violated
from reference.errors import FxOracleError

__all__ = [
    "NO_FACTS",
    "ShapeFacts",
    "SizeLike",
    "SymbolRange",
    "as_sympy",
    "prove_equal",
    "prove_sizes_equal",
    "z3_value_at",
]

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
        return HOLDS
    session = z.Session(timeout_ms)
    enc = Encoder(session)
    try:
        left_term, right_term = enc.encode(left), enc.encode(right)
    except Unsupported as unsupported:
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
            return HOLDS
        case z.CheckResult.UNSAT:
            return Unknown("SHP-10: the facts and definedness conditions contradict each other")
        case z.CheckResult.UNKNOWN:
            return Unknown(f"SHP-10: z3 could not satisfy the facts ({session.reason_unknown()})")


Side = tuple[sympy.Basic, z.Term]


def _violation(enc: Encoder, left: Side, right: Side, dropped: Sequence[sympy.Basic]) -> Verdict:
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
    if not shown:  # no symbol left: the sizes are constants and differ
        return Violated(f"SHP-9: {lexpr} != {rexpr}")
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
    return Unknown("SHP-12: " + "; ".join(unknown)) if unknown else HOLDS


def z3_value_at(
    expr: SizeLike, values: Mapping[str, int], timeout_ms: int = 2000
) -> z.Value | Unknown:
    """z3's value of the encoded `expr` with every symbol pinned to `values[name]`.

    This is how the tests hold the encoding against Python's own `//`, `%`, `math.trunc`, ...
    Undefined at these values (a zero divisor, SHP-5) or unsupported (SHP-7) gives Unknown.
    """
    session = z.Session(_checked_timeout(timeout_ms))
    enc = Encoder(session)
    try:
        term = enc.encode(as_sympy(expr))
    except Unsupported as unsupported:
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
