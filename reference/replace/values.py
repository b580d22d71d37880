"""The metadata torch's pass does not write (spec chapter 03): the subgraph's `val`s, which torch's
`invoke_subgraph` runtime reads (RPL-22), and the call's example value, one per subgraph output
(RPL-4, checked by CHK-1). torch's Dynamo graph is traced again later; the reference's result
runs as it is.
"""

from __future__ import annotations

import contextlib

import torch
import torch.fx

from reference.fx_helpers import example_value
from reference.replace.plan import OutlinePlan, Region, is_tuple_node, tuple_output_spec

Node = torch.fx.Node


def with_values(sub: torch.fx.Graph, region0: Region) -> None:
    """RPL-22: every node carries its example value as `val` too, which torch's
    `invoke_subgraph` runtime reads for the outputs' metadata; without it, in grad mode, the
    runtime runs the body on uninitialised copies of the operands to learn it (an int64 index
    operand then indexes out of range) and cannot return an int (a SymInt output). When
    `region0` has `val`s alone (torch.export's), they are the values autograd gives
    (`grad_tracked`)."""
    for node in sub.nodes:
        value = node.meta.get("example_value")
        if value is not None and "val" not in node.meta:
            node.meta["val"] = value
    if not any("example_value" in n.meta for n in region0):
        grad_tracked(sub)  # torch.export's values do not track requires_grad


def grad_tracked(sub: torch.fx.Graph) -> None:
    """RPL-22 for a graph whose values do not say which require grad (torch.export's `val`s are
    traced without autograd: a linear of a weight that requires grad says it does not): the
    subgraph's nodes are run again on its placeholders' fake values in grad mode, and each
    takes the value autograd gives as its `val`. A body it cannot run so (a `get_attr` body, an
    op fake tensors cannot run) keeps the values it has."""
    from torch._guards import detect_fake_mode

    operands = [n.meta.get("example_value") for n in sub.nodes if n.op == "placeholder"]
    mode = detect_fake_mode(operands)
    run = _Values(torch.fx.GraphModule(torch.nn.Module(), sub))
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(torch.enable_grad())
            if mode is not None:
                stack.enter_context(mode)
            run.run(*operands)
    except Exception:  # told by what the runtime then does (CHK-17), never raised here
        return
    for node, value in run.values.items():
        node.meta["val"] = value


class _Values(torch.fx.Interpreter):
    """Runs a graph and keeps every call's result, as it is (not detached)."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__(gm)
        self.values: dict[Node, object] = {}

    def run_node(self, n: Node) -> object:
        result = super().run_node(n)
        if n.op not in ("placeholder", "output"):
            self.values[n] = result
        return result


def set_call_value(invoke: Node, region: Region, plan: OutlinePlan) -> None:
    """The call's example value: one per subgraph output, in the subgraph's order (a tuple
    output's elements flattened, RPL-4), when every output has one (EFF-2: fresh storages)."""
    values: list[object] = []
    for p in plan.outputs:
        node = region[p]
        if is_tuple_node(node):
            values.extend(_element(example_value(node), path) for path in tuple_output_spec(node))
        else:
            values.append(example_value(node))
    if values and all(v is not None for v in values):
        invoke.meta["example_value"] = tuple(values)


def _element(value: object, path: tuple[int, ...]) -> object:
    for i in path:
        assert isinstance(value, tuple), "RPL-4: a path of a tuple output indexes tuples"
        value = value[i]
    return value
