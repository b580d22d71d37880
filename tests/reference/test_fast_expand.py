"""EXP-11: the expansion's speed-ups (`reference.fast.expand`) give the plain path's result: the
lazy ancestor search answers like a full closure, the fast view builder refuses what the plain
one refuses, and the fast expansion equals the plain one on generated views (here); equal views
and expansions of captured graphs, the corpus and random models, are in
`tests/reference/test_fast_paths.py`."""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import pytest
import torch
from hypothesis import given

from reference.errors import FxOracleError
from reference.expand.lockstep import GraphView, ancestors, expand
from reference.expand.regions import view_of_graph
from reference.fast.expand import AncestorSearch
from tests.reference.test_expand_props import graphs
from tests.support.views import view

CF = "call_function"


@pytest.mark.parametrize("seed", range(5))
def test_exp11_ancestor_search_matches_closure(seed: int) -> None:
    """EXP-11: the lazy rank-bounded search answers exactly like a full ancestor closure, in
    any order of questions, and so does the plain path's `ancestors`."""
    graph = nx.gnp_random_graph(40, 0.1, seed=seed, directed=True)
    dag = nx.DiGraph((u, w) for u, w in graph.edges if u < w)
    dag.add_nodes_from(range(40))
    rows = [(f"n{i}", CF, [f"n{u}" for u in sorted(dag.predecessors(i))], None) for i in range(40)]
    v = view(rows)
    for root in (39, 25, 10):
        search = AncestorSearch(v.args, root)
        expected = nx.ancestors(dag, root)
        assert ancestors(v.args, root) == expected
        for u in sorted(range(40), reverse=seed % 2 == 0):
            assert (u in search) == (u in expected), (root, u)


@given(graphs())
def test_exp11_fast_expansion_equals_plain_on_generated_graphs(v: GraphView) -> None:
    """EXP-11: every group, region and step (candidates, refusing region, reason) is equal."""
    plain = expand(v)
    assert expand(v, fast=True) == plain
    assert plain.groups, "a generated graph has a group to expand"


def _out_of_order_graph() -> torch.fx.Graph:
    """`neg` moved before `relu`, the argument it uses."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    r = g.call_function(torch.relu, (x,))
    n = g.call_function(torch.neg, (r,))
    g.output(n)
    r.prepend(n)
    return g


def _foreign_argument_graph() -> torch.fx.Graph:
    """`neg` uses a placeholder of another graph."""
    other = torch.fx.Graph()
    g = torch.fx.Graph()
    n = g.call_function(torch.neg, (other.placeholder("y"),))
    g.output(n)
    return g


@pytest.mark.parametrize("build", [_out_of_order_graph, _foreign_argument_graph])
def test_exp11_fast_view_refuses_a_graph_as_the_plain_one_does(
    build: Callable[[], torch.fx.Graph],
) -> None:
    """EXP-11: a graph whose positions are not ranks is refused by both builders, one error."""
    graph = build()
    buckets = [list(graph.nodes)]
    with pytest.raises(FxOracleError) as plain:
        view_of_graph(graph, buckets)
    with pytest.raises(FxOracleError) as fast:
        view_of_graph(graph, buckets, fast=True)
    assert str(fast.value) == str(plain.value)
