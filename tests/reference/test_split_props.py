"""Property tests: a split module computes what the original does, for random monotonic and
non-monotonic policies on generated graphs (spec chapter 05, SPL-3, SPL-7, SPL-10, SPL-11,
SPL-13).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import pytest
import torch
import torch.fx
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.errors import FxOracleError
from reference.fx_helpers import NodeIndex
from reference.split import split_module
from reference.split.plan import plan_split
from tests.support.split_cases import assert_same_results, callback

OPS: tuple[Callable[..., Any], ...] = (torch.sin, torch.cos, operator.add, operator.mul, torch.relu)


@dataclass(frozen=True, slots=True)
class Program:
    """`ops[i]` applied to values `args[i]` (0, 1: inputs; k + 2: node k); no-grad in
    [grad_off, grad_on) when `grad_off` is set; `outputs` are value indices."""

    ops: tuple[int, ...]
    args: tuple[tuple[int, int], ...]
    outputs: tuple[int, ...]
    grad_off: int | None
    grad_on: int


@st.composite
def programs(draw: st.DrawFn) -> Program:
    n = draw(st.integers(1, 9))
    ops = tuple(draw(st.integers(0, len(OPS) - 1)) for _ in range(n))
    args = tuple((draw(st.integers(0, i + 1)), draw(st.integers(0, i + 1))) for i in range(n))
    outputs = tuple(sorted(set(draw(st.lists(st.integers(2, n + 1), max_size=3))) | {n + 1}))
    grad_off = draw(st.none() | st.integers(0, n - 1))
    grad_on = draw(st.integers(grad_off or 0, n)) if grad_off is not None else n
    return Program(ops, args, outputs, grad_off, grad_on)


def build(program: Program) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    values = [graph.placeholder("x"), graph.placeholder("y")]
    for i, (op, (a, b)) in enumerate(zip(program.ops, program.args, strict=True)):
        if i == program.grad_off:
            graph.call_function(torch._C._set_grad_enabled, (False,))
        if program.grad_off is not None and i == program.grad_on:
            graph.call_function(torch._C._set_grad_enabled, (True,))
        arity = 2 if OPS[op] in (operator.add, operator.mul) else 1
        values.append(graph.call_function(OPS[op], (values[a], values[b])[:arity]))
    if program.grad_off is not None and program.grad_on == len(program.ops):
        graph.call_function(torch._C._set_grad_enabled, (True,))
    graph.output(tuple(values[k] for k in program.outputs))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def partition_graph_is_acyclic(gm: torch.fx.GraphModule, ids: dict[str, int]) -> bool:
    """An independent oracle for SPL-7: the quotient graph of data uses has no cycle."""
    quotient: nx.DiGraph[int] = nx.DiGraph()
    quotient.add_nodes_from(set(ids.values()))
    for node in gm.graph.nodes:
        for arg in node.all_input_nodes:
            if node.name in ids and arg.name in ids and ids[arg.name] != ids[node.name]:
                quotient.add_edge(ids[arg.name], ids[node.name])
    return bool(nx.is_directed_acyclic_graph(quotient))


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.rand(3, requires_grad=True), torch.rand(3)


@pytest.mark.spec("SPL-13", "SPL-7", "SPL-10", "SPL-11")
@settings(max_examples=80)
@given(
    programs(), st.lists(st.integers(0, 3), min_size=12, max_size=12), st.booleans(), st.booleans()
)
def test_split_computes_what_the_original_does(
    program: Program, raw_ids: list[int], monotonic: bool, keep_original_order: bool
) -> None:
    gm = build(program)
    names = [n.name for n in gm.graph.nodes if n.op == "call_function"]
    chosen = sorted(raw_ids[: len(names)]) if monotonic else raw_ids[: len(names)]
    ids = dict(zip(names, chosen, strict=True))
    decreasing = any(a > b for a, b in itertools.pairwise(chosen))
    x, y = inputs()
    if program.grad_off is not None and decreasing:
        with pytest.raises(FxOracleError, match="monotonically increasing"):
            split_module(gm, None, callback(ids), keep_original_order=keep_original_order)
        return
    if not partition_graph_is_acyclic(gm, ids):
        with pytest.raises(FxOracleError, match="cycle exists between partitions!"):
            split_module(gm, None, callback(ids), keep_original_order=keep_original_order)
        return
    split = split_module(gm, None, callback(ids), keep_original_order=keep_original_order)
    split.graph.lint()
    assert_same_results(gm(x, y), split(x, y))
    assert torch.is_grad_enabled()


@pytest.mark.spec("SPL-1", "SPL-3")
@given(programs(), st.lists(st.integers(0, 3), min_size=12, max_size=12))
def test_plan_interfaces_are_exactly_the_cross_partition_values(
    program: Program, raw_ids: list[int]
) -> None:
    gm = build(program)
    program_no_state = program.grad_off is None
    names = [n.name for n in gm.graph.nodes if n.op == "call_function"]
    ids = dict(zip(names, sorted(raw_ids[: len(names)]), strict=True))
    plan = plan_split(gm, callback(ids))
    nodes = list(gm.graph.nodes)
    owner = {i: p.pid for p in plan.partitions for i in p.nodes}
    assert sorted(owner) == [i for i, n in enumerate(nodes) if n.op == "call_function"]
    for part in plan.partitions:
        used = {a for i in part.nodes for a in plan.facts.nodes[i].inputs}
        if program_no_state:  # global-state nodes take no inputs anyway
            assert set(part.inputs) == {a for a in used if owner.get(a) != part.pid}
        for i in part.outputs:
            users = [u for u, f in enumerate(plan.facts.nodes) if i in f.inputs]
            assert any(owner.get(NodeIndex(u)) != part.pid for u in users)
    assert sorted(plan.order) == sorted(p.pid for p in plan.partitions)
