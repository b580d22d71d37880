"""Chapter 00 worked example: an fx graph as fxoracle captures it, node by node (op, target,
args, users, the shape of `meta["example_value"]`); then the same graph after deduplication,
where a higher-order op, `invoke_subgraph`, calls a subgraph fetched by `get_attr`."""

import torch

from reference import deduplicate
from reference.dynamo.capture import capture
from reference.names import qualified_name


def block(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2


def model(x: torch.Tensor) -> torch.Tensor:
    return block(block(x).sum(0) + x)


def shown(arg: object) -> str:
    return arg.name if isinstance(arg, torch.fx.Node) else repr(arg)


c = capture(model, (torch.randn(3, 3),))
print("node    op             target                    args          users       example_value")
for n in c.gm.graph.nodes:
    target = "-" if n.op in ("placeholder", "output") else qualified_name(n.target)
    args = ", ".join(shown(a) for a in n.args) if n.op != "output" else shown(n.args[0][0])
    users = ", ".join(u.name for u in n.users) or "-"
    value = n.meta.get("example_value")
    size = f"shape {tuple(value.shape)}" if isinstance(value, torch.Tensor) else "-"
    print(f"{n.name:<7} {n.op:<14} {target:<25} {args:<13} {users:<11} {size}")
print()
deduplicate(c.gm, c.tracker)
print(c.gm.code.strip())
