"""07.1 (SHP-2, SHP-9): nested floor divisions by positive numbers compose, so the first
equation holds. `(s0 // 2) * 3` and `(s0 * 3) // 2` differ at every odd `s0`: at 1 they are 0
and 1 (z3's model may name another odd size)."""

NESTED_HOLDS = True
S0 = 1
