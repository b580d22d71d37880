"""07.2 (SHP-2, SHP-3, SHP-5): Python's `7 // -2` is -4 and `1 % -2` is -1 (SMT's Euclidean
`div` and `mod` give -3 and 1); the encoding agrees with Python. At `b = 0` the value is
undefined: `Unknown`, as Python would raise ZeroDivisionError."""

FLOORDIV_7_BY_MINUS_2 = -4
MOD_1_BY_MINUS_2 = -1
AT_B_ZERO = "Unknown"
