"""The replacer's gate (spec chapter 06, CHK-12): it refuses a group whose regions' shapes
differ, and changes nothing when every group is provable. (Refusing a group that would close a
cycle is the reference's own rule, RPL-25: `tests/reference/test_contraction.py`.)
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch
import torch.fx

from checker.proof.gate import make_gate
from reference.dynamo.capture import Capture, capture
from reference.pipeline import deduplicate
from reference.replace.legality import Refusal, Veto
from reference.replace.plan import plan_outline
from reference.verdict import HOLDS
from tests.support.corpus import CORPUS_DIR, load_model_file

pytestmark = pytest.mark.filterwarnings("ignore")

Node = torch.fx.Node


def regions(nodes: dict[str, Node], *names: Sequence[str]) -> list[list[Node]]:
    return [[nodes[n] for n in region] for region in names]


def _dynamic() -> Capture:
    info = load_model_file(CORPUS_DIR / "own_dynamic.py")
    return capture(info.model, info.example_inputs, info.dynamic)


@pytest.mark.spec("CHK-12")
def test_chk12_refuses_unequal_symbolic_shapes_with_a_model() -> None:
    """own_dynamic: the block on x (s77 x s27) and on y (s17 x s94) are not merged by the key;
    forced into one group, the gate proves their sizes can differ."""
    c = _dynamic()
    nodes = {n.name: n for n in c.gm.graph.nodes}
    group = regions(nodes, ["mul", "relu", "sum_1", "add"], ["mul_1", "relu_1", "sum_2", "add_1"])
    refusal = make_gate(c.gm)(group, plan_outline(group))
    assert isinstance(refusal, Veto) and refusal.rule is Refusal.GATE
    region, reason = refusal.region, refusal.detail
    assert region == 1
    assert reason.startswith("CHK-12: shapes of mul_1 and mul differ: sizes: SHP-12: dim 0: ")
    assert "s17" in reason and "s77" in reason


@pytest.mark.spec("CHK-12")
def test_chk12_allows_a_normal_group() -> None:
    c = _dynamic()
    nodes = {n.name: n for n in c.gm.graph.nodes}
    group = regions(nodes, ["mul", "relu", "sum_1", "add"], ["mul_2", "relu_2", "sum_3", "add_2"])
    assert make_gate(c.gm)(group, plan_outline(group)) is HOLDS


def _code(gm: torch.fx.GraphModule) -> str:
    return gm.code + "".join(f"{name}:{m.code}" for name, m in gm.named_children())


@pytest.mark.parametrize(
    "name",
    [
        "d01_single_subgraph.py",
        "d03_multiple_subgraphs.py",
        "d05_input_mutation.py",
        "d15_mutation_ordering.py",
        "d17_tuple_inputs.py",
        "own_autocast_bf16.py",
        "own_dynamic.py",
        "own_tuple_chunk.py",
        "t07_global_state_no_grad.py",
    ],
)
@pytest.mark.spec("CHK-12")
def test_chk12_the_gate_changes_nothing_when_every_group_is_provable(name: str) -> None:
    info = load_model_file(CORPUS_DIR / name)
    plain = capture(info.model, info.example_inputs, info.dynamic)
    deduplicate(plain.gm, plain.tracker)
    gated = capture(info.model, info.example_inputs, info.dynamic)
    result = deduplicate(gated.gm, gated.tracker, gate=make_gate(gated.gm))
    assert [r.detail for r in result.refused if r.detail.startswith("CHK-")] == []
    assert _code(gated.gm) == _code(plain.gm)
