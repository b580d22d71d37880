"""The alias DB through replacement (spec chapter 09, EFF-7): updated in place, it equals a DB
built afresh after every replacement, on the corpus and random models; and the refusals that
read it (RPL-7 through a view)."""

from __future__ import annotations

import graphlib
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import pytest
import torch
import torch.fx

from reference.dynamo.capture import Capture, capture
from reference.effects.alias_db import AliasDB
from reference.expand.regions import search_regions
from reference.pipeline import deduplicate
from reference.replace.cycle import Contraction
from reference.replace.legality import OutlineContext, Refusal
from reference.replace.outliner import ModuleInstaller, Outlining, outline_group
from reference.sort.deps import OrderingDeps, pinned_targets
from tests.support.corpus import captured, corpus_files, random_captures

Node = torch.fx.Node


def _topological(graph: torch.fx.Graph) -> list[Node]:
    """The graph's nodes, arguments first (after a replacement the calls sit at the end, before
    the sort; the users of their getitems sit earlier)."""
    sorter: graphlib.TopologicalSorter[Node] = graphlib.TopologicalSorter()
    for node in graph.nodes:
        sorter.add(node, *node.all_input_nodes)
    return list(sorter.static_order())


class _Compared(Contraction):
    """RPL-25's contraction, told of every replacement right after it: there, the alias DB
    updated in place is compared with a fresh one."""

    def __init__(self, graph: torch.fx.Graph, deps: OrderingDeps, db: AliasDB) -> None:
        super().__init__(graph, deps.as_mapping())
        self.graph, self.db, self.compared = graph, db, 0

    def replaced(self, region: Sequence[Node]) -> None:
        super().replaced(region)
        writes = {n: p for n, p in self.db.written.items() if n.graph is self.graph}
        fresh = AliasDB(self.graph, writes, _topological(self.graph))
        nodes = list(self.graph.nodes)
        assert self.db.partition(nodes) == fresh.partition(nodes), f"EFF-7: after {region[0].name}"
        self.compared += 1


def _compare_through_dedup(c: Capture) -> int:
    graph = c.gm.graph
    writes = {n: tuple(sorted(p)) for n, p in c.tracker.node_to_mutated_arg_positions.items()}
    db = AliasDB(graph, writes)
    deps = OrderingDeps.from_graph(graph, writes, db=db)
    compared = _Compared(graph, deps, db)
    context = OutlineContext(graph, db, pinned_targets())
    redirect = partial(deps.redirect, keep_erased_deps=True)
    run = Outlining(graph, ModuleInstaller(c.gm), context, redirect, compared)
    for index, group in enumerate(search_regions(graph, c.tracker.buckets()).region_groups()):
        outline_group(run, index, group)
    return compared.compared


@pytest.mark.spec("EFF-7")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem)
def test_eff7_the_updated_db_equals_a_fresh_one_after_every_replacement(path: Path) -> None:
    _compare_through_dedup(captured(path))


@pytest.mark.spec("EFF-7", "DIF-6")
def test_eff7_the_updated_db_equals_a_fresh_one_on_random_models() -> None:
    compared = sum(map(_compare_through_dedup, random_captures(7, 60)))
    assert compared >= 60, "the random models replace regions"


@pytest.mark.spec("RPL-7", "EFF-6")
def test_rpl7_a_write_through_a_view_of_an_input_is_refused() -> None:
    """The block views its input and updates the view in place, inside the region: it writes
    the input (torch checks the positions the input is used at: the view is the region's own)."""

    def block(h: torch.Tensor) -> torch.Tensor:
        w = h.view(-1).mul_(2)
        return (w * 3).sin()

    def model(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return block(x * 1.0), block(y * 1.0)

    c = capture(model, (torch.randn(4), torch.randn(4)))
    result = deduplicate(c.gm, c.tracker)
    assert {r.reason for r in result.refused} == {Refusal.MUTATED_INPUT}, result.refused
    assert [r.detail.split(" writes ")[0] for r in result.refused] == ["w", "w_1"]
