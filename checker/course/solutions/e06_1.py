"""06.1 (CHK-3, CHK-16): CHK-3 compares constants exactly and sees `1.5000000015 instead of
1.5`. CHK-6 holds, and not because of CHK-16's tolerance: the inputs are float32, and the
constant becomes float32 when it multiplies them. `1.5 * (1 + 1e-9)` rounds to 1.5 exactly in
float32 (24 bits of mantissa: the next float32 above 1.5 is 1.5 + 1.2e-7), so both modules
compute the same bits ("rounding"). A zero tolerance would change nothing: there is no
difference to flag; only CHK-3, which compares the constants themselves, sees the bug."""

VIOLATED = {"CHK-3"}
FLOAT32_CONSTANT = 1.5
LARGEST_OUTPUT_DIFFERENCE = 0.0
CHK6_HOLDS_BECAUSE = "rounding"
ZERO_TOLERANCE_CATCHES_IT = False
