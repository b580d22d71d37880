"""06.3 (CHK-2): the extra dependency makes the first call follow `mul_2`, which reads the
call's result through `getitem`: `invoke_subgraph -> getitem -> mul_2 -> invoke_subgraph`."""

VIOLATED = {"CHK-2"}
CYCLE = ["invoke_subgraph", "getitem", "mul_2", "invoke_subgraph"]
