"""04.1 (SRT-6): the mutators are visited in order. `add_` first: `a` is a direct user of `x`
before it, so `add_` follows `a`; `b`, `mul_` and `c` come after it, so each follows `add_`.
Then `mul_`: `a`, `add_` (already listed) and `b` precede it, so it follows them; `c` follows
`mul_`. Only direct users of `x` count, and `add_` and `mul_` are users of `x` too."""

EXTRA = {
    "a": [],
    "add_": ["a"],
    "b": ["add_"],
    "mul_": ["add_", "a", "b"],
    "c": ["add_", "mul_"],
}
