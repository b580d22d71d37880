"""Property tests of the expansion on generated graphs (spec chapter 02)."""

from __future__ import annotations

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from reference.expand.lockstep import GraphView, expand, make_view
from reference.fx_helpers import NodeIndex

Row = tuple[str, tuple[int, ...], int | None]


@st.composite
def graphs(draw: st.DrawFn) -> GraphView:
    """Random DAGs: a few placeholders, then repeated blocks with mutations and random edges."""
    n_inputs = draw(st.integers(1, 3))
    rows: list[Row] = [("placeholder", (), None) for _ in range(n_inputs)]
    pick_lists = st.lists(st.integers(0, 8), min_size=1, max_size=3)
    template = draw(st.lists(pick_lists, min_size=2, max_size=6))
    for _ in range(draw(st.integers(2, 4))):
        start = len(rows)
        for j, picks in enumerate(template):
            local = tuple(sorted({start + p % j for p in picks} if j else set()))
            extra = draw(st.lists(st.integers(0, start - 1), max_size=1)) if j % 2 == 0 else []
            label = draw(st.sampled_from([j] * 5 + [100 + j % 2]))
            rows.append(("call_function", tuple(sorted(set(local) | set(extra))), label))
    return _to_view(rows)


def _to_view(rows: list[Row]) -> GraphView:
    labels: dict[int, list[NodeIndex]] = {}
    for i, (_, _, label) in enumerate(rows):
        if label is not None:
            labels.setdefault(label, []).append(NodeIndex(i))
    return make_view(
        tuple(f"n{i}" for i in range(len(rows))),
        tuple(op for op, _, _ in rows),
        tuple(tuple(NodeIndex(a) for a in args) for _, args, _ in rows),
        tuple(tuple(m) for m in labels.values()),
    )


def _dag(v: GraphView) -> nx.DiGraph[int]:
    g: nx.DiGraph[int] = nx.DiGraph()
    g.add_nodes_from(range(len(v)))
    g.add_edges_from((a, i) for i, args in enumerate(v.args) for a in args)
    return g


@given(graphs())
def test_exp4_disjoint_on_generated_graphs(v: GraphView) -> None:
    """EXP-4: no node is in two regions, within or across groups."""
    seen: list[int] = [n for group in expand(v).kept_regions() for r in group for n in r]
    assert len(seen) == len(set(seen)), "EXP-4: node claimed twice"


@given(graphs())
def test_exp6_positions_key_equal(v: GraphView) -> None:
    """EXP-6 and EXP-5: corresponding nodes share a bucket; no input joins a region."""
    for group in expand(v).kept_regions():
        assert len({len(r) for r in group}) == 1
        for position in zip(*group, strict=True):
            assert len({v.bucket_of[n] for n in position}) == 1, "EXP-6"
            assert all(v.ops[n] == "call_function" for n in position), "EXP-5"


@given(graphs())
def test_exp8_contraction_acyclic(v: GraphView) -> None:
    """EXP-8: contracting any single region to one node leaves the graph acyclic."""
    dag = _dag(v)
    for group in expand(v).kept_regions():
        for region in group:
            inside = set(region)
            quotient: nx.DiGraph[int] = nx.DiGraph()
            for a, b in dag.edges:
                qa, qb = (-1 if a in inside else a), (-1 if b in inside else b)
                if qa != qb:
                    quotient.add_edge(qa, qb)
            assert nx.is_directed_acyclic_graph(quotient), f"EXP-8: region {region}"


@given(graphs())
def test_exp12_regions_are_ancestor_closed_paths(v: GraphView) -> None:
    """EXP-12: every region node is its root (the latest node) or an ancestor of it."""
    dag = _dag(v)
    for group in expand(v).kept_regions():
        for region in group:
            root = max(region)
            assert set(region) - {root} <= nx.ancestors(dag, root), "EXP-12"
