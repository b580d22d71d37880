"""Chapter 07 worked example: four `prove_equal` queries and their three kinds of verdict.

Sizes are sympy expressions over integer symbols, built with torch's own `FloorDiv` and
`PythonMod`, as they appear in a traced graph's `example_value`s.
"""

import sympy
from torch.utils._sympy.functions import FloorDiv, PythonMod

from checker.proof.shapes.prove import NO_FACTS, ShapeFacts, prove_equal, z3_value_at

s0 = sympy.Symbol("s0", integer=True)
even = ShapeFacts(assumptions=(sympy.Eq(PythonMod(s0, 2), 0),))  # what view(-1, 2) records
queries = [
    ("floor division by a negative", FloorDiv(s0, -2), -FloorDiv(s0 + 1, 2), NO_FACTS),
    ("pairs, no facts", 2 * FloorDiv(s0, 2), s0, NO_FACTS),
    ("pairs, s0 % 2 == 0", 2 * FloorDiv(s0, 2), s0, even),
    ("an operator z3 lacks", sympy.sin(s0), s0, NO_FACTS),
]
for title, lhs, rhs, facts in queries:
    print(f"{title}: {lhs} == {rhs}")
    print(f"    {prove_equal(lhs, rhs, facts)}")
print()
print("z3 at s0=7:", FloorDiv(s0, -2), "=", z3_value_at(FloorDiv(s0, -2), {"s0": 7}), end="")
print(f"  (Python: 7 // -2 = {7 // -2}; SMT-LIB's div gives -3)")
