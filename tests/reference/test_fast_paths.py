"""EXP-11, SRT-2, SRT-4: the speed-ups of `reference.fast` give the plain paths' results on the
corpus and on random models: the same view and expansion (every step) of the captured graph,
the same sorted order of the graph, scrambled, under its ordering deps, and the same
deduplicated graph from `deduplicate(..., fast=True)`."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from checker.oracle.campaign.randmodels import random_model
from reference.dynamo.capture import capture
from reference.expand.regions import search_regions
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from reference.sort.deps import OrderingDeps
from reference.sort.stable import stable_topological_sort
from reference.track.offline import track_graph
from tests.support.corpus import corpus_files, load_model_file

RANDOM_MODELS = 12


def sorted_names(gm: torch.fx.GraphModule, fast: bool) -> list[str]:
    """A copy of `gm`'s graph with its body reversed, sorted under its ordering deps."""
    graph = copy_graph_module(gm).gm.graph
    deps = OrderingDeps.from_graph(graph).as_mapping()
    output = next(n for n in graph.nodes if n.op == "output")
    for node in [n for n in graph.nodes if n.op != "output"][::-1]:
        output.prepend(node)
    stable_topological_sort(graph, deps, fast=fast)
    return [n.name for n in graph.nodes]


def assert_fast_equals_plain(gm: torch.fx.GraphModule) -> None:
    buckets = track_graph(gm.graph).buckets()
    plain, fast = search_regions(gm.graph, buckets), search_regions(gm.graph, buckets, fast=True)
    assert fast.view == plain.view, "EXP-11: the fast view differs"
    assert fast.expansion == plain.expansion, "EXP-11: the fast expansion differs"
    assert sorted_names(gm, fast=True) == sorted_names(gm, fast=False), "SRT-2: orders differ"
    assert deduplicated_code(gm, fast=True) == deduplicated_code(gm, fast=False)


def deduplicated_code(gm: torch.fx.GraphModule, fast: bool) -> str:
    """The code of a copy of `gm` after `deduplicate(..., fast=fast)`."""
    copy = copy_graph_module(gm).gm
    deduplicate(copy, track_graph(copy.graph), fast=fast)
    return copy.code


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem)
def test_exp11_srt2_fast_paths_equal_plain_on_the_corpus(path: Any) -> None:
    f = load_model_file(path)
    assert_fast_equals_plain(capture(f.model, f.example_inputs, f.dynamic).gm)


def test_exp11_srt2_fast_paths_equal_plain_on_random_models() -> None:
    for index in range(RANDOM_MODELS):
        m = random_model(11, index)
        assert_fast_equals_plain(capture(m.model, m.example_inputs, m.dynamic).gm)
