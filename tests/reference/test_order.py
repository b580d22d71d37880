"""Tests for the stable topological sort (spec chapter 04, SRT).

The core is checked on hand-made dependency lists and with Hypothesis, the fx adapter on
hand-built graphs next to torch's `_stable_topological_sort` (D8-D10, D14). The
comparison on 320 scrambled random graphs is in `tests/oracle/test_order_torch.py`.
"""

from __future__ import annotations

import itertools
import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from torch._dynamo.graph_deduplication import _stable_topological_sort
from torch.fx import Graph, Node
from torch.utils._ordered_set import OrderedSet

from reference.errors import FxOracleError
from reference.sort.cycle import Cycle
from reference.sort.stable import SortStep, apply_order, order_indices, stable_topological_sort

ExtraDeps = dict[Node, list[Node]]


def names(graph: Graph) -> list[str]:
    return [node.name for node in graph.nodes]


def by_name(graph: Graph) -> dict[str, Node]:
    return {node.name: node for node in graph.nodes}


def chain_graph() -> Graph:
    """x -> add -> mul -> output, already sorted."""
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    m = g.call_function(operator.mul, (a, 2))
    g.output(m)
    return g


# ---- the pure core -------------------------------------------------------------------------


@pytest.mark.spec("SRT-1")
def test_srt1_independent_nodes_keep_their_order() -> None:
    """SRT-1: with no dependencies the order is the identity."""
    assert order_indices(4, [[], [], [], []]) == [0, 1, 2, 3]


@pytest.mark.spec("SRT-1", "SRT-2")
def test_srt2_a_node_is_placed_right_after_its_last_dependency() -> None:
    """SRT-2: 0 waits on 1; once 1 is placed, 0 goes right after it, before 2."""
    assert order_indices(3, [[1], [], []]) == [1, 0, 2]


@pytest.mark.spec("SRT-2")
def test_srt2_waiters_are_requeued_in_the_order_they_started_waiting() -> None:
    """SRT-2: 0 = add(3, 2) first waits on its LAST unready dep 2, 1 waits on 3; after 2 is
    placed 0 joins 3's list behind 1, so 1 goes first (torch: ones, zeros, neg, add)."""
    assert order_indices(4, [[3, 2], [3], [], []]) == [2, 3, 1, 0]


@pytest.mark.spec("SRT-2")
def test_srt2_repeated_deps_count_at_first_occurrence() -> None:
    """SRT-2: deps [3, 2, 3] are the ordered set {3, 2}, so the last one is 2, as above."""
    assert order_indices(4, [[3, 2, 3], [3], [], []]) == [2, 3, 1, 0]


@pytest.mark.spec("SRT-5")
def test_srt5_core_returns_a_canonical_cycle() -> None:
    """SRT-5: the witness starts at its smallest position and reads "must precede"."""
    assert order_indices(3, [[2], [0], [1]]) == Cycle((0, 1, 2, 0))
    assert order_indices(2, [[], [1]]) == Cycle((1, 1))


@pytest.mark.spec("SRT-5")
def test_srt5_core_rejects_bad_input() -> None:
    """SRT-5: positions out of range and a wrong number of lists are bad input."""
    with pytest.raises(FxOracleError, match=r"outside 0\.\.1"):
        order_indices(2, [[2], []])
    with pytest.raises(FxOracleError, match="expected deps for 3 nodes"):
        order_indices(3, [[], []])


@st.composite
def dep_lists(draw: st.DrawFn) -> list[list[int]]:
    n = draw(st.integers(0, 12))
    return [draw(st.lists(st.integers(0, n - 1), max_size=4)) if n else [] for _ in range(n)]


@pytest.mark.spec("SRT-2", "SRT-5")
@given(dep_lists())
def test_srt5_result_is_an_order_or_a_real_cycle(deps: list[list[int]]) -> None:
    """SRT-2/SRT-5: every node follows its deps, or each witness step is a real dependency."""
    result = order_indices(len(deps), deps)
    if isinstance(result, Cycle):
        steps = itertools.pairwise(result.path)
        assert all(before in deps[after] for before, after in steps)
        assert result.path[0] == result.path[-1] == min(result.path)
        return
    assert sorted(result) == list(range(len(deps)))
    placed_at = {node: k for k, node in enumerate(result)}
    assert all(placed_at[d] < placed_at[i] for i, own in enumerate(deps) for d in own)


@pytest.mark.spec("SRT-4")
@given(st.lists(st.lists(st.integers(0, 30), max_size=4), max_size=15))
def test_srt4_sorted_positions_are_unchanged(raw: list[list[int]]) -> None:
    """SRT-4: when every dep precedes its node the order is the identity."""
    deps = [[d % i for d in own] if i else [] for i, own in enumerate(raw)]
    assert order_indices(len(deps), deps) == list(range(len(deps)))


# ---- the fx adapter ------------------------------------------------------------------------


@pytest.mark.spec("SRT-4")
def test_srt4_sorted_graph_moves_nothing() -> None:
    """SRT-4: the sort of a sorted graph moves no node (same objects, same order)."""
    g = chain_graph()
    before = list(g.nodes)
    stable_topological_sort(g, {})
    assert list(g.nodes) == before
    assert apply_order(g, before) == 0


@pytest.mark.spec("SRT-3")
def test_srt3_output_goes_last_d14() -> None:
    """SRT-3, torch D14: the output moved before the last node goes back to the end."""
    g = chain_graph()
    nodes = by_name(g)
    nodes["add"].append(nodes["output"])
    twin = chain_graph()
    twin_nodes = by_name(twin)
    twin_nodes["add"].append(twin_nodes["output"])
    stable_topological_sort(g, {})
    _stable_topological_sort(twin, {})
    assert names(g) == names(twin) == ["x", "add", "mul", "output"]


@pytest.mark.spec("SRT-3")
def test_srt3_upstream_output_before_first_root_stays_first_in_torch() -> None:
    """SRT-3 Upstream: torch never moves the output, nor the first placed node, so an output
    before every dependency-free node stays first; ours goes last."""
    g, twin = chain_graph(), chain_graph()
    for graph in (g, twin):
        nodes = by_name(graph)
        nodes["x"].prepend(nodes["output"])
    stable_topological_sort(g, {})
    _stable_topological_sort(twin, {})
    assert names(g) == ["x", "add", "mul", "output"]
    assert names(twin) == ["output", "x", "add", "mul"]


@pytest.mark.spec("SRT-3", "SRT-5")
def test_srt5_depending_on_the_output_or_an_outside_node_is_an_error() -> None:
    """SRT-5: such a node can never be placed (torch: "stable topological sort failed")."""
    g = chain_graph()
    nodes = by_name(g)
    with pytest.raises(FxOracleError, match="add depends on output, the output node"):
        stable_topological_sort(g, {nodes["add"]: [nodes["output"]]})
    stray = chain_graph().find_nodes(op="placeholder")[0]
    with pytest.raises(FxOracleError, match="mul depends on x, a node outside the graph"):
        stable_topological_sort(g, {nodes["mul"]: [stray]})


def _cycle_graph() -> tuple[Graph, ExtraDeps]:
    """b is out of order (torch moves it) and add <-> mul form a cycle through an extra dep."""
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    m = g.call_function(operator.mul, (a, 2))
    b = g.call_function(operator.neg, (x,))
    g.output((m, b))
    x.prepend(b)
    return g, {a: [m]}


@pytest.mark.spec("SRT-5")
def test_srt5_cycle_error_names_the_cycle_and_leaves_the_graph_alone() -> None:
    """SRT-5: exact message; ours leaves the graph as it was, torch has already moved `neg`."""
    g, extra = _cycle_graph()
    before = list(g.nodes)
    with pytest.raises(FxOracleError) as caught:
        stable_topological_sort(g, extra)
    assert str(caught.value) == "SRT-5: no topological order exists: cycle add -> mul -> add"
    assert isinstance(caught.value, AssertionError)  # what torch's sort raises there too
    assert list(g.nodes) == before
    twin, twin_extra = _cycle_graph()
    with pytest.raises(AssertionError, match=r"^(stable topological sort failed)?$"):  # 2.11: bare
        _stable_topological_sort(twin, {k: OrderedSet(v) for k, v in twin_extra.items()})
    assert names(twin) == ["x", "neg", "add", "mul", "output"]


@pytest.mark.spec("SRT-4")
def test_srt4_an_order_that_is_not_every_node_once_is_bad_input() -> None:
    """SRT-4: `apply_order` takes every node of the graph exactly once: a node listed twice in
    place of another, a missing node or a node of another graph is an error, nothing moved."""
    g = chain_graph()
    x, add, mul, out = g.nodes
    stranger = next(iter(chain_graph().nodes))
    for order in ([x, add, add, out], [x, add, out], [x, add, stranger, out], [x, add, mul]):
        with pytest.raises(FxOracleError, match="SRT-4: the order must list every node"):
            apply_order(g, order)
        assert names(g) == ["x", "add", "mul", "output"]


@pytest.mark.spec("SRT-5")
@pytest.mark.parametrize(
    ("extra", "cycle"),
    [
        ({"mul": ["mul"]}, "mul -> mul"),  # D8: a node depends on itself
        ({"mul": ["add"], "add": ["mul"]}, "add -> mul -> add"),  # D9 (mul -> add is an arg)
    ],
)
def test_srt5_self_and_two_node_cycles(extra: dict[str, list[str]], cycle: str) -> None:
    """SRT-5, torch D8-D10: self dependency and a two-node cycle through extra deps."""
    g = chain_graph()
    nodes = by_name(g)
    deps = {nodes[k]: [nodes[d] for d in v] for k, v in extra.items()}
    with pytest.raises(FxOracleError, match=f"cycle {cycle}$"):
        stable_topological_sort(g, deps)


@pytest.mark.spec("SRT-2")
def test_srt2_a_trace_sees_every_visit_and_changes_nothing() -> None:
    """`order_indices(..., trace)`: one step per visit, the last step's order is the result,
    and a node that waits names its last unplaced dep (chapter 04's picture reads this)."""
    deps = [[], [0, 2], [0, 3], [0, 4], [0]]  # the worked example's scrambled graph
    steps: list[SortStep] = []
    assert order_indices(5, deps, steps.append) == order_indices(5, deps) == [0, 4, 3, 2, 1]
    assert steps[-1].order == (0, 4, 3, 2, 1) and steps[-1].pending == ()
    assert [(s.node, s.waits_on) for s in steps[:4]] == [(0, None), (1, 2), (2, 3), (3, 4)]
    assert steps[3].waiting == ((2, (1,)), (3, (2,)), (4, (3,)))
