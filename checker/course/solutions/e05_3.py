"""05.3 (SPL-10): with a grad-mode node the ids must not decrease in node order (a grad region
must be contiguous), so `a` in 1 then `no_grad` in 0 is refused, in torch's words. Without
global state nothing needs contiguity: partition 1 (`a`) simply runs before partition 0."""

REFUSED = True
ORDER_WITHOUT_GRAD_NODES = [1, 0]
