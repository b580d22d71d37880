"""Differential tests: our region groups against torch's on the corpus (chapter 02)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from reference.dynamo.capture import Capture, capture
from tests.support.corpus import corpus_files, load_model_file, torch_region_groups

pytestmark = pytest.mark.torch_diff

FILES = corpus_files()


def _ours(path: Path) -> tuple[Capture, list[list[list[str]]]]:
    model_file = load_model_file(path)
    c = capture(model_file.model, model_file.example_inputs, model_file.dynamic)
    groups = c.tracker.get_identical_regions(c.gm.graph)
    return c, [[[n.name for n in r] for r in g] for g in groups]


def _merges_unequal_keys(c: Capture, groups: list[list[list[str]]]) -> bool:
    """Does some position of some group hold nodes whose keys differ (TRK-5, TRK-6)?"""
    by_name = {n.name: n for n in c.gm.graph.nodes}
    keys = c.tracker.node_to_key
    for group in groups:
        for position in zip(*group, strict=True):
            if len({keys.get(by_name[name]) for name in position}) > 1:
                return True
    return False


def _disjoint_prefix(groups: list[list[list[str]]]) -> list[list[list[str]]]:
    """torch's groups without those that reuse a node of an earlier group (B4)."""
    seen: set[str] = set()
    kept = []
    for group in groups:
        names = {n for r in group for n in r}
        if not names & seen:
            kept.append(group)
        seen |= names
    return kept


def test_corpus_is_large_enough() -> None:
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_exp13_regions_equal_torch(path: Path) -> None:
    """EXP-13: equal groups where torch is right; where torch is wrong, we are right."""
    wrong = load_model_file(path).torch_wrong
    c, ours = _ours(path)
    theirs = torch_region_groups(path)
    if wrong in ("B1", "B2"):
        assert _merges_unequal_keys(c, theirs), "torch merges different constants/targets"
        assert not _merges_unequal_keys(c, ours), "TRK-5/TRK-6: we never do"
    elif wrong == "B4":
        assert ours == _disjoint_prefix(theirs) and ours != theirs, "EXP-4"
    else:
        assert ours == theirs


def test_b1_keeps_float_constants_apart() -> None:
    """TRK-5 (B1): three calls with scales .5, 2., 3. never share a region group position."""
    path = next(p for p in FILES if p.stem == "b1_float_constants")
    c, ours = _ours(path)
    theirs = torch_region_groups(path)
    assert theirs and _merges_unequal_keys(c, theirs)
    assert not any(len(g) == 3 for g in ours)


def test_inplace_inputs_are_tracked() -> None:
    """TRK-8 in the corpus: our live mutation map equals torch's on every file that mutates."""
    from tests.support.corpus import torch_mutations

    for path in FILES:
        if "inplace" not in path.stem and "mutation" not in path.stem:
            continue
        model_file = load_model_file(path)
        c = capture(model_file.model, model_file.example_inputs, model_file.dynamic)
        ours = {n.name: sorted(p) for n, p in c.tracker.node_to_mutated_arg_positions.items()}
        assert ours == torch_mutations(path), path.stem


_ = torch
