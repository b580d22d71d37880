"""01.3 (TRK-2): only the global state's grad mode differs. Under `no_grad` an op records no
autograd graph, so a subgraph keyed in grad mode must not serve a call under `no_grad`."""

DIFFERING_FIELD = "global_state.grad_enabled"
