"""02.2 (EXP-8, RPL-25): crossed regions. `b0 = a0 + a1` and `b1 = a1 + a0` with
`a_k = sin(x_k)`: region `[a0, b0]` alone is safe (no outside user of it feeds its root), and
so is `[a1, b1]`; but region 0 reads `a1` of region 1 and region 1 reads `a0` of region 0, so
contracting both closes `region 0 -> region 1 -> region 0`. Expansion checks regions one by
one (as torch does); the replacer checks the group and refuses it (RPL-25)."""

import torch
import torch.fx


def build() -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x0, x1 = g.placeholder("x0"), g.placeholder("x1")
    a0, a1 = g.call_function(torch.sin, (x0,)), g.call_function(torch.sin, (x1,))
    b0 = g.call_function(torch.add, (a0, a1))
    b1 = g.call_function(torch.add, (a1, a0))
    g.output((b0, b1))
    return torch.fx.GraphModule(torch.nn.Module(), g)
