"""A region holding a getitem of a tuple an earlier call replaced (spec chapter 03, RPL-17):
the getitem is a flattened operand, so the call passes the getitem that took over from it;
a getitem the call would compute itself is refused."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import torch

from checker.proof.check import check_transformation
from reference.dynamo.capture import Capture, capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate, outline_groups
from reference.replace.legality import Refusal
from reference.replace.outliner import DedupResult
from tests.reference.test_deps import by_name
from tests.support.corpus import CORPUS_DIR, load_model_file


def _r3_block(h: torch.Tensor, g: torch.Tensor, s: float) -> torch.Tensor:
    a, b = h.clone().chunk(2, dim=-1)
    return torch.cat([b * s, a], dim=-1) * g


def _r3(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    h0 = _r3_block(x, x, 2.0)
    h1 = _r3_block(h0, h0, 3.0)
    h2 = _r3_block(h1, h0, 0.5)
    return h0, h1, h2, _r3_block(h2, h2, 0.5)


def _corpus(stem: str) -> Capture:
    model = load_model_file(CORPUS_DIR / f"{stem}.py")
    return capture(model.model, model.example_inputs, model.dynamic)


def _proved(c: Capture, run: Callable[[], DedupResult]) -> DedupResult:
    """Run the pass on `c`; the numbers equal the original's and every obligation holds."""
    original = copy_graph_module(c.gm).gm
    want = original(*c.example_inputs)
    result = run()
    torch.testing.assert_close(c.gm(*c.example_inputs), want)
    report = check_transformation(original, c.gm, c.example_inputs)
    assert report.ok, report
    return result


def _taken(result: DedupResult) -> list[tuple[int, int, tuple[str, ...]]]:
    return [(r.group, r.region, r.taken) for r in result.replaced if r.taken]


@pytest.mark.spec("RPL-17")
def test_rpl17_a_taken_over_flattened_getitem_is_passed_from_the_earlier_call() -> None:
    """Fuzz finding R3 (`random_12_1620`): region 0 outputs the `chunk` tuple whose getitem
    `a_2` begins region 1, a flattened operand (RPL-4). Replacing region 0 re-points `a_2` to a
    getitem of its call; region 1's call passes that getitem (and so in group 1), so all six
    regions are replaced (five while RPL-17 refused region 1), the numbers equal and the result
    is proved."""
    c = capture(_r3, (torch.randn(6, 8),))
    result = _proved(c, lambda: deduplicate(c.gm, c.tracker))
    assert not result.refused
    assert len(result.replaced) == 6
    assert _taken(result) == [(0, 1, ("a_2",)), (1, 1, ("a_3",))]


@pytest.mark.spec("RPL-17")
@pytest.mark.parametrize(
    ("stem", "taken"),
    [
        ("a9_getitem_in_next_region", [(0, 1, ("b_1",))]),  # the next region of the group
        ("a10_getitem_in_later_group", [(1, 0, ("scale",)), (1, 1, ("scale_1",))]),  # later
        ("own_mha_blocks", [(0, 1, ("attn_output_2",)), (0, 2, ("attn_output_4",))]),  # a chain
    ],
)
def test_rpl17_chains_keep_every_region(stem: str, taken: list[object]) -> None:
    """DiT's and SD3's shapes (A9, A10) and a chain of `MultiheadAttention` blocks, each of
    whose regions begins with a getitem of the previous region's tuple: every region is
    replaced, none refused, and the result is proved."""
    c = _corpus(stem)
    result = _proved(c, lambda: deduplicate(c.gm, c.tracker))
    assert not result.refused
    assert _unnumbered(_taken(result)) == _unnumbered(taken)


def _unnumbered(taken: list[Any]) -> list[Any]:
    """The take-overs with Dynamo's `_N` suffixes dropped: the numbers differ between torch
    releases (2.11 names MultiheadAttention's outputs otherwise than 2.13)."""
    return [(g, r, tuple(re.sub(r"_\d+$", "", n) for n in names)) for g, r, names in taken]


def _halves(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    c, d = (x * 2).chunk(2), (y * 2).chunk(2)
    return c[0], z * 3, d[0], z * 4, c[1], d[1]


@pytest.mark.spec("RPL-17")
def test_rpl17_a_taken_over_getitem_the_call_would_compute_is_refused() -> None:
    """The counterexample: group 1's regions hold `getitem(chunk, 0)` with no user inside the
    region, so it is no flattened operand: the call would compute it from the tuple itself,
    which group 0's call replaced and erased (and which torch's runtime could not take as an
    operand, RPL-21). The group is refused; the graph still computes what it did."""
    c = capture(_halves, tuple(torch.randn(4, 3) for _ in range(3)))
    n = by_name(c.gm.graph)
    first = [[n["mul"], n["chunk"]], [n["mul_1"], n["chunk_1"]]]
    second = [[n["getitem"], n["mul_2"]], [n["getitem_2"], n["mul_3"]]]
    result = _proved(c, lambda: outline_groups(c.gm, [first, second], {}))
    refused = [(r.group, r.region, r.reason, r.detail) for r in result.refused]
    assert refused == [(1, 0, Refusal.TAKEN_OVER, "getitem is now a getitem of invoke_subgraph")]
    assert [(r.group, r.region) for r in result.replaced] == [(0, 0), (0, 1)]
