"""05.2 (SPL-3, SPL-9, SPL-13): `a` crosses from partition 0 to partition 1, so it is partition
0's output and partition 1's input; partition 1 also returns `total`. The `no_grad` region
spans both partitions, so partition 1 begins with a copy of `_set_grad_enabled(False)`
(partition 0 holds the original). The split keeps eager's `requires_grad`: `total` needs grad
through `a`."""

INPUTS = {0: ["x"], 1: ["a"]}
OUTPUTS = {0: ["a"], 1: ["total"]}
PRELUDES = {0: [], 1: ["no_grad"]}
TOTAL_REQUIRES_GRAD = True
