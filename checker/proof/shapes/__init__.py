"""Symbolic shapes (spec chapter 07, SHP; chapter 06, CHK-5 and CHK-12): `facts` reads the
ShapeEnv's ranges and equalities, `encoding` turns sympy sizes into z3 terms, `prove` proves
sizes equal or finds a witness, `check` compares the values at every call, `z3_adapter` is the
one typed boundary to z3."""

from checker.proof.shapes.facts import NO_FACTS, ShapeFacts, SymbolRange
from checker.proof.shapes.prove import prove_equal, prove_sizes_equal, z3_value_at

__all__ = [
    "NO_FACTS",
    "ShapeFacts",
    "SymbolRange",
    "prove_equal",
    "prove_sizes_equal",
    "z3_value_at",
]
