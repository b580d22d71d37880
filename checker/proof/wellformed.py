"""Well-formedness of a transformed graph module (spec chapter 06, CHK-1).

Every graph of the module tree passes `Graph.lint()`. Every `invoke_subgraph(subgraph, name,
*operands)` fetches a graph module with a `get_attr`, passes as many operands as it has
placeholders, each a value torch's runtime takes (RPL-21: no float, no module), the subgraph
mutates none of its inputs (CHK-15), its results and operands share no storage (CHK-18), no
later node writes an operand it saves for backward (CHK-22), every `getitem` on the call is in
range of the tuple the subgraph returns, and a call's example value, where it has one, holds one
value per output, of its dtype and rank and, where both are plain ints, its sizes.
Identifiers and subgraphs correspond one to one: torch's `invoke_subgraph` caches its autograd
function by identifier, so one identifier naming two subgraphs would run the wrong body. A
`call_module` of a graph module passes no more operands than it has placeholders.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from functools import partial

import torch
import torch.fx

from checker.proof.call_aliasing import check_call_aliasing, placeholder_origins
from checker.proof.graphs import graph_modules
from checker.proof.verdict import HOLDS, Verdict, Violated, first_failure, prefixed
from reference.effects.alias_db import AliasDB
from reference.fx_helpers import attribute, example_value
from reference.names import INVOKE
from reference.replace.runtime import runtime_takes

Node = torch.fx.Node


def check_wellformed(gm: torch.fx.GraphModule) -> Verdict:
    """Lint, call arity, getitem range and identifier uniqueness over the module tree."""
    modules = list(graph_modules(gm))
    seen = _Seen()
    origins = placeholder_origins(gm)
    return prefixed("CHK-1: ", first_failure(
        *(partial(_lint, path, module) for path, module in modules),
        *(partial(_call, module, path, node, seen)
          for path, module in modules for node in module.graph.nodes),
        *(partial(_aliasing, path, module, origins) for path, module in modules),
    ))  # fmt: skip


def _lint(path: str, module: torch.fx.GraphModule) -> Verdict:
    try:
        module.graph.lint()
    except Exception as e:  # lint raises RuntimeError or ValueError with the graph appended
        first = str(e).strip().splitlines()[0]
        return Violated(f"{path.rstrip('.') or 'graph'}: lint: {first}")
    return HOLDS


def _aliasing(path: str, module: torch.fx.GraphModule, origins: Mapping[Node, Node]) -> Verdict:
    return prefixed(path, check_call_aliasing(module, origins))


class _Seen:
    """What one check has seen: each identifier with its subgraph, and each subgraph's CHK-15
    verdict (a body called many times is judged once)."""

    def __init__(self) -> None:
        self.by_name: dict[str, torch.fx.GraphModule] = {}
        self.by_module: dict[torch.fx.GraphModule, str] = {}
        self.bodies: dict[torch.fx.GraphModule, Verdict] = {}

    def mutation(self, callee: torch.fx.GraphModule) -> Verdict:
        if callee not in self.bodies:
            self.bodies[callee] = _mutation(callee)
        return self.bodies[callee]


def _call(module: torch.fx.GraphModule, path: str, node: Node, seen: _Seen) -> Verdict:
    if node.op == "call_function" and node.target is INVOKE:
        return prefixed(f"{path}{node.name}: ", _invoke(module, node, seen))
    if node.op == "call_module":
        callee = _target(module, node)
        if isinstance(callee, torch.fx.GraphModule):
            given = len(node.args) + len(node.kwargs)
            return prefixed(f"{path}{node.name}: ", _arity(callee, given, exact=False))
    return HOLDS


def _invoke(module: torch.fx.GraphModule, node: Node, seen: _Seen) -> Verdict:
    fetch = node.args[0] if node.args else None
    callee = _target(module, fetch) if isinstance(fetch, Node) and fetch.op == "get_attr" else None
    if not isinstance(callee, torch.fx.GraphModule):
        return Violated("operand 0 is not a get_attr of a graph module")
    identifier = node.args[1] if len(node.args) > 1 else None
    if not isinstance(identifier, str):
        return Violated(f"identifier {identifier!r} is not a string")
    return first_failure(
        partial(_identifier, identifier, callee, seen),
        partial(_arity, callee, len(node.args) - 2, exact=True),
        partial(_operands, module, node),
        partial(seen.mutation, callee),
        partial(_getitems, callee, node),
        partial(_call_value, callee, node),
    )


def _operands(module: torch.fx.GraphModule, node: Node) -> Verdict:
    """Every operand is a value torch's runtime takes (RPL-21): a `get_attr` of a module (a
    higher-order op's body) or a node whose example value is a float or a tuple is not."""
    for k, operand in enumerate(node.args[2:]):
        if isinstance(operand, Node):
            value = _target(module, operand) if operand.op == "get_attr" else example_value(operand)
        else:
            value = operand
        if not runtime_takes(value):
            what = operand.name if isinstance(operand, Node) else repr(operand)
            kind = type(value).__name__
            return Violated(f"operand {k} ({what}) is a {kind}, not a value torch's runtime takes")
    return HOLDS


def _mutation(callee: torch.fx.GraphModule) -> Verdict:
    """CHK-15: the subgraph writes none of its placeholders, nor any alias of one (torch's
    `invoke_subgraph` does not support input mutation: its functionalization rejects it).
    What a node writes is the alias DB's (chapter 09)."""
    db = AliasDB(callee.graph)
    inputs = {c: n for n in callee.graph.find_nodes(op="placeholder") for c in db.classes(n)}
    for node in callee.graph.nodes:
        written = sorted(db.writes(node) & inputs.keys())
        if written:
            return Violated(
                f"CHK-15: {node.name} mutates the subgraph's input {inputs[written[0]].name}"
            )
    return HOLDS


def _identifier(identifier: str, callee: torch.fx.GraphModule, seen: _Seen) -> Verdict:
    """Identifiers and subgraphs correspond one to one (CHK-1)."""
    module = seen.by_name.setdefault(identifier, callee)
    name = seen.by_module.setdefault(callee, identifier)
    if module is not callee:
        return Violated(f"identifier {identifier!r} already names another subgraph")
    if name != identifier:
        return Violated(f"the subgraph is called as {identifier!r} and as {name!r}")
    return HOLDS


def _arity(callee: torch.fx.GraphModule, given: int, *, exact: bool) -> Verdict:
    wanted = sum(1 for n in callee.graph.nodes if n.op == "placeholder")
    if given == wanted or (not exact and given < wanted):
        return HOLDS
    return Violated(f"{given} operands for {wanted} placeholders")


def _getitems(callee: torch.fx.GraphModule, node: Node) -> Verdict:
    outputs = next(n.args[0] for n in callee.graph.nodes if n.op == "output")
    if not isinstance(outputs, tuple | list):
        return Violated("the subgraph does not return a tuple")
    for user in node.users:
        if user.target is not operator.getitem:
            continue
        index = user.args[1] if len(user.args) > 1 else None
        if not isinstance(index, int) or not 0 <= index < len(outputs):
            return Violated(f"{user.name} reads output {index} of {len(outputs)}")
    return HOLDS


def _call_value(callee: torch.fx.GraphModule, node: Node) -> Verdict:
    """A call's example value, where it has one, holds one value per subgraph output, each
    tensor like its output (`_alike`): later passes read the call's results from it."""
    value = node.meta.get("example_value")
    outputs = next(n.args[0] for n in callee.graph.nodes if n.op == "output")
    if value is None or not isinstance(outputs, tuple | list):
        return HOLDS
    if not isinstance(value, tuple) or len(value) != len(outputs):
        count = len(value) if isinstance(value, tuple) else "no tuple of"
        return Violated(f"its example value has {count} values for {len(outputs)} outputs")
    for k, (mine, output) in enumerate(zip(value, outputs, strict=True)):
        theirs = example_value(output) if isinstance(output, Node) else None
        tensors = isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor)
        if tensors and not _alike(mine, theirs):
            return Violated(f"example value {k} is {_meta(mine)}, output {k} is {_meta(theirs)}")
    return HOLDS


def _alike(a: object, b: object) -> bool:
    """Same dtype and rank, and equal sizes where both are plain ints (a symbolic size, such as
    a data-dependent one that each call draws afresh, is not compared)."""
    assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
    if a.dtype != b.dtype or a.dim() != b.dim():
        return False
    pairs = zip(a.shape, b.shape, strict=True)
    return all(x == y for x, y in pairs if isinstance(x, int) and isinstance(y, int))


def _meta(t: object) -> str:
    assert isinstance(t, torch.Tensor)
    return f"{tuple(t.shape)} {t.dtype}"


def _target(module: torch.nn.Module, node: Node) -> object:
    return attribute(module, str(node.target))
