"""04.3 (SRT-5): `out` needs `before` (a data edge) and `before` now needs `out`: no order
exists. The error names the cycle from its earliest node, `before -> out -> before`, and the
graph keeps its order: a failed sort changes nothing."""

CYCLE = ["before", "out", "before"]
ORDER_AFTER = ["x", "before", "add_", "after", "out", "output"]
