"""04.2 (SRT-9, SRT-10): torch's update drops `after`'s own entry ("after follows add_"), so
`inv` has no deps: it is ready at once and keeps its place right after `x`, reading `x` before
the write (a wrong result). With `keep_erased_deps=True`, `inv` takes over `after`'s deps: it
waits on `add_`, which waits on `before`, and the sort places it after `add_`."""

TORCH_DEPS_OF_INV: list[str] = []
INHERITED_DEPS_OF_INV = ["add_"]
TORCH_ORDER = ["x", "inv", "before", "add_", "out", "output"]
INHERITED_ORDER = ["x", "before", "add_", "inv", "out", "output"]
