"""09.1 (EFF-5, EFF-6, SRT-12): `h`, its views `v` and `s` and the in-place `add_` share one
storage class; `add_` writes it, `v` and `s` read it (making a view reads its base), `y` reads
it through `v`. SRT-6 orders `add_` after `v` and `s` (direct users of `h`) and nothing else:
`y` reads `v`, not `h`. SRT-12 adds `y after add_`, and the same for the `s.sum()` of the
return (`sum_2`), which reads the view `s` after the update."""

SHARE_H_STORAGE = {"h", "v", "s", "add_"}
SRT12_ONLY = {"y after add_", "sum_2 after add_"}
