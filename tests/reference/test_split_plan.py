"""Unit tests of the pure split planning: orders, regions and plans on hand-made facts, no
tracing (spec chapter 05, SPL).
"""

from __future__ import annotations

import pytest

from reference.errors import FxOracleError
from reference.fx_helpers import NodeIndex
from reference.split.graph import (
    NodeKind,
    PartitionId,
    SplitGraph,
    SplitNode,
    StateOp,
    SymbolUse,
)
from reference.split.partition_order import lifo_order
from reference.split.plan import make_plan
from reference.split.repair import appearance_order, position_edges

P = PartitionId
N = NodeIndex


def call(
    name: str, *inputs: int, state: StateOp | None = None, grad_enabled: bool | None = None
) -> SplitNode:
    args = tuple(N(i) for i in inputs)
    return SplitNode(name, NodeKind.CALL, args, state, grad_enabled=grad_enabled)


def ph(name: str, *symbols: SymbolUse) -> SplitNode:
    return SplitNode(name, NodeKind.PLACEHOLDER, symbols=symbols)


def out(*inputs: int) -> SplitNode:
    return SplitNode("output", NodeKind.OUTPUT, tuple(N(i) for i in inputs))


@pytest.mark.spec("SPL-7")
def test_lifo_order_pops_the_last_ready_root_first() -> None:
    """S3: roots 1 and 2 appear in that order; torch runs 2 first."""
    assert lifo_order([P(1), P(2)], {P(1): [], P(2): []}) == (2, 1)
    assert lifo_order([P(0), P(1)], {P(0): [P(1)], P(1): [P(0)]}) is None


@pytest.mark.spec("SPL-8")
def test_appearance_order_is_appearance_when_topological() -> None:
    assert appearance_order([P(1), P(0)], []) == (1, 0)
    assert appearance_order([P(1), P(0), P(2)], [(P(0), P(1))]) == (0, 1, 2)
    assert appearance_order([P(0), P(1)], [(P(0), P(1)), (P(1), P(0))]) is None


@pytest.mark.spec("SPL-11")
def test_position_edges_pin_a_partition_between_its_neighbours() -> None:
    edges = position_edges([P(0), P(1), P(2)], frozenset({P(1)}))
    assert edges == [(0, 1), (1, 2)]


def b6_facts() -> SplitGraph:
    """x; a=sin(x); set_grad(False); e=cos(a); set_grad(True); add(e, a); output(add, a)."""
    return SplitGraph(
        (
            ph("x"),
            call("a", 0),
            call("g0", state=StateOp.SET_GRAD, grad_enabled=False),
            call("e", 1),
            call("g1", state=StateOp.SET_GRAD, grad_enabled=True),
            call("add", 3, 1),
            out(5, 1),
        )
    )


@pytest.mark.spec("SPL-11", "SPL-9")
def test_plan_runs_state_partitions_in_place_b6() -> None:
    plan = make_plan(b6_facts(), [None, P(0), P(1), P(2), P(3), P(4), None])
    assert plan.upstream_order == (3, 1, 0, 2, 4)
    assert plan.order == (0, 1, 2, 3, 4)
    assert plan.partition(P(2)).preludes == (2,)
    assert plan.partition(P(4)).preludes == (4,)
    assert plan.partition(P(0)).outputs == (1,)  # a: used by e, add and the output


@pytest.mark.spec("SPL-10")
def test_plan_refuses_decreasing_ids_with_state() -> None:
    with pytest.raises(FxOracleError, match="highest: 2, this node's: 1"):
        make_plan(b6_facts(), [None, P(0), P(2), P(1), P(3), P(4), None])


@pytest.mark.spec("SPL-3", "SPL-4")
def test_inputs_in_first_use_order_and_outputs_in_first_recorded_use_order() -> None:
    facts = SplitGraph(
        (
            ph("x"),
            ph("y"),
            call("a", 1),
            call("b", 0),
            call("c", 3, 2, 1),
            out(4, 3, 2),
        )
    )
    plan = make_plan(facts, [None, None, P(0), P(0), P(1), None])
    assert plan.partition(P(1)).inputs == (3, 2, 1)
    assert plan.partition(P(0)).inputs == (1, 0)
    assert plan.partition(P(0)).outputs == (3, 2)
    assert plan.partition(P(1)).outputs == (4,)
    assert plan.order == (0, 1)


@pytest.mark.spec("SPL-6")
def test_symbol_binders_follow_a_tensor_input() -> None:
    """u0 is bound by `k` in partition 0; `t` (size u0) crosses from 1 to 2."""
    u0 = SymbolUse("u0", N(1))
    s1 = SymbolUse("s1", N(0))
    facts = SplitGraph(
        (
            ph("s1"),
            call("k", 0),
            SplitNode("t", NodeKind.CALL, (N(1),), symbols=(s1, u0)),
            call("r", 2),
            out(3),
        )
    )
    plan = make_plan(facts, [None, P(0), P(1), P(2), None])
    assert plan.partition(P(2)).inputs == (2, 0, 1)
    assert plan.partition(P(0)).outputs == (1,)
    assert plan.partition(P(0)).dependents == (1, 2)
