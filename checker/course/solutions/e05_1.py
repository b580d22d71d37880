"""05.1 (SPL-8, SPL-11): with `keep_original_order=True` both use the first-appearance order.
It is topological here, and it runs every partition in its place, so every partition starts
under the grad mode it had (SPL-11): the two agree."""

REFERENCE_ORDER = [0, 1, 2, 3, 4]
TORCH_ORDER = [0, 1, 2, 3, 4]
