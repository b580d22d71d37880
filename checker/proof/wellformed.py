"""Well-formedness of a transformed graph module (spec chapter 06, CHK-1).

Every graph of the module tree passes `Graph.lint()`. Every `invoke_subgraph(subgraph, name,
*operands)` fetches a graph module with a `get_attr`, passes as many operands as it has
placeholders, each a value torch's runtime takes (RPL-21: no float, no module), the subgraph
mutates none of its inputs (CHK-15), its results and operands share no storage (CHK-18), and
every `getitem` on the call is in range of the tuple the subgraph returns.
Identifiers and subgraphs correspond one to one: torch's `invoke_subgraph` caches its autograd
function by identifier, so one identifier naming two subgraphs would run the wrong body. A
`call_module` of a graph module passes no more operands than it has placeholders.
"""

from __future__ import annotations

import operator

import torch
import torch.fx

from checker.proof.call_aliasing import aliasing_problem
from checker.proof.graphs import graph_modules
from checker.proof.verdict import Holds, Verdict, Violated
from reference.effects.alias_db import AliasDB
from reference.fx_helpers import attribute, example_value
from reference.names import INVOKE
from reference.replace.runtime import runtime_takes

Node = torch.fx.Node


def check_wellformed(gm: torch.fx.GraphModule) -> Verdict:
    """Lint, call arity, getitem range and identifier uniqueness over the module tree."""
    modules = list(graph_modules(gm))
    for path, module in modules:
        problem = _lint(module)
        if problem is not None:
            return Violated(f"CHK-1: {path.rstrip('.') or 'graph'}: lint: {problem}")
    seen = _Seen()
    for path, module in modules:
        for node in module.graph.nodes:
            problem = _call_problem(module, node, seen)
            if problem is not None:
                return Violated(f"CHK-1: {path}{node.name}: {problem}")
    for path, module in modules:
        problem = aliasing_problem(module)
        if problem is not None:
            return Violated(f"CHK-1: {path}{problem}")
    return Holds()


def _lint(module: torch.fx.GraphModule) -> str | None:
    try:
        module.graph.lint()
    except Exception as e:  # lint raises RuntimeError or ValueError with the graph appended
        return str(e).strip().splitlines()[0]
    return None


class _Seen:
    """What one check has seen: each identifier with its subgraph, and each subgraph's CHK-15
    verdict (a body called many times is judged once)."""

    def __init__(self) -> None:
        self.by_name: dict[str, torch.fx.GraphModule] = {}
        self.by_module: dict[torch.fx.GraphModule, str] = {}
        self.bodies: dict[torch.fx.GraphModule, str | None] = {}

    def mutation_problem(self, callee: torch.fx.GraphModule) -> str | None:
        if callee not in self.bodies:
            self.bodies[callee] = _mutation_problem(callee)
        return self.bodies[callee]


def _call_problem(module: torch.fx.GraphModule, node: Node, seen: _Seen) -> str | None:
    if node.op == "call_function" and node.target is INVOKE:
        return _invoke_problem(module, node, seen)
    if node.op == "call_module":
        callee = _target(module, node)
        if isinstance(callee, torch.fx.GraphModule):
            return _arity_problem(callee, len(node.args) + len(node.kwargs), exact=False)
    return None


def _invoke_problem(module: torch.fx.GraphModule, node: Node, seen: _Seen) -> str | None:
    fetch = node.args[0] if node.args else None
    callee = _target(module, fetch) if isinstance(fetch, Node) and fetch.op == "get_attr" else None
    if not isinstance(callee, torch.fx.GraphModule):
        return "operand 0 is not a get_attr of a graph module"
    identifier = node.args[1] if len(node.args) > 1 else None
    if not isinstance(identifier, str):
        return f"identifier {identifier!r} is not a string"
    problem = _identifier_problem(identifier, callee, seen)
    if problem is None:
        problem = _arity_problem(callee, len(node.args) - 2, exact=True)
    if problem is None:
        problem = _operand_problem(module, node) or seen.mutation_problem(callee)
    return problem if problem is not None else _getitem_problem(callee, node)


def _operand_problem(module: torch.fx.GraphModule, node: Node) -> str | None:
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
            return f"operand {k} ({what}) is a {kind}, not a value torch's runtime takes"
    return None


def _mutation_problem(callee: torch.fx.GraphModule) -> str | None:
    """CHK-15: the subgraph writes none of its placeholders, nor any alias of one (torch's
    `invoke_subgraph` does not support input mutation: its functionalization rejects it).
    What a node writes is the alias DB's (chapter 09)."""
    db = AliasDB(callee.graph)
    inputs = {c: n for n in callee.graph.find_nodes(op="placeholder") for c in db.classes(n)}
    for node in callee.graph.nodes:
        written = sorted(db.writes(node) & inputs.keys())
        if written:
            return f"CHK-15: {node.name} mutates the subgraph's input {inputs[written[0]].name}"
    return None


def _identifier_problem(identifier: str, callee: torch.fx.GraphModule, seen: _Seen) -> str | None:
    """Identifiers and subgraphs correspond one to one (CHK-1)."""
    module = seen.by_name.setdefault(identifier, callee)
    name = seen.by_module.setdefault(callee, identifier)
    if module is not callee:
        return f"identifier {identifier!r} already names another subgraph"
    if name != identifier:
        return f"the subgraph is called as {identifier!r} and as {name!r}"
    return None


def _arity_problem(callee: torch.fx.GraphModule, given: int, *, exact: bool) -> str | None:
    wanted = sum(1 for n in callee.graph.nodes if n.op == "placeholder")
    if given == wanted or (not exact and given < wanted):
        return None
    return f"{given} operands for {wanted} placeholders"


def _getitem_problem(callee: torch.fx.GraphModule, node: Node) -> str | None:
    outputs = next(n.args[0] for n in callee.graph.nodes if n.op == "output")
    if not isinstance(outputs, tuple | list):
        return "the subgraph does not return a tuple"
    for user in node.users:
        if user.target is not operator.getitem:
            continue
        index = user.args[1] if len(user.args) > 1 else None
        if not isinstance(index, int) or not 0 <= index < len(outputs):
            return f"{user.name} reads output {index} of {len(outputs)}"
    return None


def _target(module: torch.nn.Module, node: Node) -> object:
    return attribute(module, str(node.target))
