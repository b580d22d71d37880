"""What the ShapeEnv knows about the symbols, as data: ranges and assumptions (SHP-6,
specs/07-shapes.md). `checker.proof.shapes.encoding` turns these facts into z3 constraints.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from torch.fx.experimental.symbolic_shapes import ShapeEnv


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
