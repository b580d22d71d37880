"""03.1 (RPL-2, RPL-8, RPL-13): region 1 passes two different tensors where region 0 passes
`x` twice, so the subgraph gets two placeholders. Region 0 would then pass `x` as two operands
(input-input aliasing) and is refused under RPL-8; region 1 is replaced. The outputs equal the
original's (torch 2.13 drops `z` here, B3)."""

PLACEHOLDERS = 2
REPLACED = [1]
REFUSED = {0: "RPL-8"}
SAME_RESULT = True
