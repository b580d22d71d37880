"""07.1 (SHP-2, SHP-9): nested floor divisions by positive numbers compose, so the first
equation holds. `(s0 // 2) * 3` and `(s0 * 3) // 2` differ at every odd `s0`: at 1 they are 0
and 1. z3's model names one size that separates the sides; on torch 2.13's z3 it is 1, the
answer's own (`Z3_SAME_SIZE`); with S0 = 3 it would be False."""

NESTED_HOLDS = True
S0 = 1
Z3_SAME_SIZE = True
