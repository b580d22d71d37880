"""01.1 (TRK-5): `0.0`/`-0.0`, `1`/`True` and `(1, 2)`/`[1, 2]` get different keys: a constant
is keyed by type and `repr`. Ops see the difference: `1 / (x * -0.0)` is -inf, `full(.., True)`
makes a bool tensor and `full(.., 1)` an int64 one, and a tuple and a list are different
structures. `torch.float` is `torch.float32` (one object), so those keys are equal."""

EQUAL_KEYS = {"torch.float32/torch.float"}
