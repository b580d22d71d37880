"""Quality tests: bugs planted in copies of correct transformations must be caught by the right
obligation with a small witness (spec chapter 06, CHK-1 to CHK-8).

Each case names its base (our deduplication, torch's, or `split_module` on a corpus file),
an edit of a copy of the transformed module, and the exact set of obligations that must be
violated: `expected` (the one the bug is about) plus `also` (consequences, e.g. numbers).
The cases themselves are catalogued in `tests/quality/planted_bugs_catalogue.py`; this file
builds the bases, plants each edit in a copy and checks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pytest

from checker.proof.check import check_transformation
from checker.proof.graphs import graph_modules
from checker.proof.report import NUMBERS, SHAPES, CheckId
from checker.proof.verdict import Holds, Violated
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module
from reference.pipeline import deduplicate
from reference.split import split_module
from tests.quality.planted_bugs_catalogue import (
    DYN,
    GM,
    LOOP,
    PLANTS,
    Deps,
    Node,
    Plant,
    tiny_constant,
    y_into_call_1,
)
from tests.support.corpus import CORPUS_DIR, load_model_file, torch_dedup_graph

pytestmark = pytest.mark.filterwarnings("ignore")


@dataclass(frozen=True, slots=True, eq=False)
class Base:
    """A correct transformation: original, transformed, and the transformation's extra deps."""

    original: GM
    transformed: GM
    deps: Mapping[Node, Sequence[Node]]


def _base(source: str) -> Base:
    kind, name = source.split(":")
    info = load_model_file(CORPUS_DIR / name)
    c = capture(info.model, info.example_inputs, info.dynamic)
    original = copy_graph_module(c.gm).gm
    if kind == "ours":
        return Base(original, c.gm, deduplicate(c.gm, c.tracker).extra_deps)
    if kind == "torch":
        return Base(original, torch_dedup_graph(CORPUS_DIR / name), {})
    nodes = list(original.graph.nodes)
    part = {n: 3 * i // len(nodes) for i, n in enumerate(nodes)}
    return Base(
        original, split_module(original, None, part.__getitem__, keep_original_order=True), {}
    )


class Bases:
    """The bases of one test module, each built on first use (one capture per source)."""

    def __init__(self) -> None:
        self._found: dict[str, Base] = {}

    def get(self, source: str) -> Base:
        if source not in self._found:
            self._found[source] = _base(source)
        return self._found[source]


@pytest.fixture(scope="module")
def bases() -> Bases:
    return Bases()


def planted(base: Base, edit: Callable[[GM, Deps], None]) -> tuple[GM, Deps]:
    """A copy of the base's transformed module (and deps) with `edit` applied and recompiled."""
    copied = copy_graph_module(base.transformed)
    deps: Deps = {copied.nodes[k]: [copied.nodes[d] for d in v] for k, v in base.deps.items()}
    edit(copied.gm, deps)
    for _, module in graph_modules(copied.gm):
        module.recompile()
    return copied.gm, deps


@pytest.mark.parametrize("case", PLANTS, ids=[p.name for p in PLANTS])
@pytest.mark.spec("CHK-8")
def test_chk8_planted_bug_is_caught_by_the_right_obligation(case: Plant, bases: Bases) -> None:
    base = bases.get(case.source)
    assert check_transformation(base.original, base.transformed, extra_deps=base.deps).ok
    transformed, deps = planted(base, case.edit)
    report = check_transformation(base.original, transformed, extra_deps=deps)
    assert {o.id for o in report.violations} == {case.expected, *case.also}, report.render_text()
    verdict = report.verdict_of(CheckId(case.expected))
    assert isinstance(verdict, Violated)
    assert verdict.witness.startswith(f"{case.expected}: ") and len(verdict.witness) < 300


@pytest.mark.spec("CHK-8", "CHK-13")
def test_chk8_a_relative_change_of_1e_9_is_below_the_numbers_tolerance(
    bases: Bases,
) -> None:
    """CHK-13: numbers alone cannot see it; CHK-3 compares constants exactly."""
    base = bases.get(LOOP)
    report = check_transformation(base.original, planted(base, tiny_constant)[0])
    assert isinstance(report.verdict_of(NUMBERS), Holds)
    assert report.violations[0].verdict == Violated(
        "CHK-3: no counterpart for mul = operator.mul(l_x_, 1.5); nearest invoke_subgraph/mul = "
        "operator.mul(l_x_, 1.5000000015): 1.5000000015 instead of 1.5"
    )


@pytest.mark.spec("CHK-5")
def test_chk5_the_shape_witness_carries_a_z3_model(bases: Bases) -> None:
    base = bases.get(DYN)
    verdict = check_transformation(base.original, planted(base, y_into_call_1)[0]).verdict_of(
        SHAPES
    )
    assert isinstance(verdict, Violated) and verdict.model != ()
    assert verdict.witness.startswith("CHK-5: invoke_subgraph_1 operand 0 (l_y_): sizes: ")
