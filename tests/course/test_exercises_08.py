"""Solutions of the exercises at the end of spec chapter 08, the differential oracle."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence

import pytest
import torch
import torch.fx

from checker.io.model_file import load_model_file
from checker.oracle.compare.divergence import Blame, Kind
from checker.oracle.compare.meaning import Interner, meaning
from checker.oracle.diff.driver import run_diff
from checker.oracle.plugins.example import Example
from checker.oracle.sides.sides import Component
from tests.support.corpus import CORPUS_DIR

Node = torch.fx.Node

D15 = CORPUS_DIR / "d15_mutation_ordering.py"


@pytest.mark.spec("DIF-1", "DIF-3")
def test_08_exercise_1() -> None:
    """Tracker, dedup and sort are compared, split is skipped (the example has no `split`);
    the sort orders differ but both are valid: `neither`, listed, exit status 0."""
    report = run_diff([load_model_file(D15)], "checker.oracle.plugins.example:Example")
    assert report.components == (Component.TRACKER, Component.DEDUP, Component.SORT)
    assert report.skipped == (Component.SPLIT,) and not report.fails
    assert {d.blame for g in report.graphs for d in g.divergences} <= {Blame.NEITHER}


class DropsDeadNodes(Example):
    """A sort that also removes the nodes nobody uses: not a sort any more."""

    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        super().stable_sort(graph, deps)
        for node in [n for n in graph.nodes if n.op != "output" and not n.users]:
            graph.erase_node(node)  # an in-place update nobody reads looks dead too


@pytest.mark.spec("DIF-4", "DIF-12")
def test_08_exercise_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Planted`: whatever is blamed is the plug-in, with a run or a fault as evidence (where
    its merged key still gives valid groups, the other groups are a free choice). The
    dead-node-dropping sort breaks the contract: a `contract` divergence naming the nodes."""
    report = run_diff([load_model_file(D15)], "checker.oracle.plugins.planted:Planted")
    found = report.graphs[0].divergences
    assert {d.blame for d in found if d.blame.blames_a_side} == {Blame.OTHER}
    assert {d.component for d in found if d.blame is Blame.OTHER} >= {Component.SORT}
    assert all(d.blame is Blame.NEITHER for d in found if d.component is Component.TRACKER)
    assert not any(d.bug for d in found)  # torch's catalogue names torch's bugs only
    import checker.oracle.plugins.planted as planted

    monkeypatch.setattr(planted, "DropsDeadNodes", DropsDeadNodes, raising=False)
    inplace = load_model_file(CORPUS_DIR / "own_inplace_inside.py")
    mine = run_diff([inplace], "checker.oracle.plugins.planted:DropsDeadNodes", "sort")
    kinds = {(d.kind, d.detail.split(" nodes ")[0]) for d in mine.graphs[0].divergences}
    assert kinds == {(Kind.CONTRACT, "stable_sort erased")}


def _graph(update_first: bool, independent: bool = False) -> torch.fx.GraphModule:
    g = torch.fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    if independent:
        first, second = (torch.sin, x), (torch.cos, y)
        a, b = (first, second) if update_first else (second, first)
        n1, n2 = g.call_function(a[0], (a[1],)), g.call_function(b[0], (b[1],))
        g.output((n1, n2) if update_first else (n2, n1))
    elif update_first:
        g.call_method("add_", (x, 1))
        g.output(g.call_function(operator.add, (g.call_function(torch.sin, (x,)), x)))
    else:
        s = g.call_function(torch.sin, (x,))
        g.call_method("add_", (x, 1))
        g.output(g.call_function(operator.add, (s, x)))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.spec("DIF-3")
def test_08_exercise_3() -> None:
    """The update moved across the read changes what `s` is: different meanings. The two
    independent nodes swapped mean the same."""
    interner = Interner()
    assert meaning(_graph(False), interner) != meaning(_graph(True), interner)
    assert meaning(_graph(True, True), interner) == meaning(_graph(False, True), interner)
