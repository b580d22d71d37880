"""`fxoracle explain` says why a model has no group or fewer than expected (chapter 02, EXP-14),
and `explain` and `verify` give every region of a group its outcome (chapter 03, RPL-26)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch.fx

from checker.cli import main
from checker.proof.gate import ReplacementGate
from checker.tools.explain import lesson_of, render_text, run_explain
from checker.tools.outcomes import Fate
from checker.tools.verify import render_text as verify_text
from checker.tools.verify import run_verify
from reference.dynamo.capture import capture
from reference.replace.legality import Refusal, Ruling, Veto
from reference.replace.plan import OutlinePlan
from tests.support.paths import CORPUS

pytestmark = pytest.mark.filterwarnings("ignore")

FOUR = """\
import torch


def block(x):
    return torch.relu(x * 2.0) + 1.0


def model(x):
    for _ in range(4):
        x = block(x)
    return x


example_inputs = (torch.randn(4, 4),)
"""

DYNAMIC = """\
import torch


def block(x):
    return torch.relu(x @ x.T) * 0.5


def model(a, b, c):
    return block(a), block(b), block(c)


example_inputs = (torch.randn(4, 4), torch.randn(5, 5), torch.randn(6, 6))
dynamic = True
"""


def test_exp14_b2_names_the_dropped_group_and_the_target_that_differs() -> None:
    """B2: sin and cos key apart by their target, so the muls' group never grows (EXP-1)."""
    lesson, _ = run_explain(CORPUS / "b2_targets.py")
    assert not lesson.groups
    muls = [d for d in lesson.dropped if d.members == ("mul", "mul_1", "mul_2")]
    assert len(muls) == 1 and muls[0].why.startswith("EXP-1")
    (step,) = muls[0].steps
    assert step.refused_region == 1 and "key field target is 'torch.cos'" in step.detail
    text = render_text(lesson)
    assert "No region group: why (EXP-14)" in text and "Dropped group of mul, mul_1" in text


def test_exp14_dynamic_sizes_key_apart_by_the_shape(tmp_path: Path) -> None:
    """One block on three dynamic sizes: each op's nodes key apart by their input's size."""
    path = tmp_path / "dyn.py"
    path.write_text(DYNAMIC)
    lesson, _ = run_explain(path)
    assert not lesson.groups and not lesson.dropped
    apart = {x.nodes[0]: x for x in lesson.keyed_apart}
    assert apart["matmul"].nodes == ("matmul", "matmul_1", "matmul_2")
    assert apart["matmul"].path == "args[0].shape[0]" and apart["matmul"].field == "args"
    assert apart["matmul"].first != apart["matmul"].second
    assert "keyed apart: matmul, matmul_1, matmul_2 (key field args[0].shape[0]" in render_text(
        lesson
    )


def test_exp14_json_lists_dropped_groups_and_near_misses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", str(CORPUS / "b2_targets.py"), "--json", "-"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["groups"] == [] and found["keyed_apart"] == []
    first = found["dropped"][0]
    assert first["members"] == ["mul", "mul_1", "mul_2"]
    assert first["steps"][0]["detail"].startswith("cos: key field target")


def _veto_last(monkeypatch: pytest.MonkeyPatch) -> None:
    def veto(
        self: ReplacementGate, group: Sequence[Sequence[torch.fx.Node]], plan: OutlinePlan
    ) -> Ruling:
        return Veto(Refusal.GATE, "CHK-12: planted veto", len(group) - 1)

    monkeypatch.setattr(ReplacementGate, "__call__", veto)


def test_rpl26_a_vetoed_group_lists_all_four_regions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate vetoes region 3: regions 0-2 are not replaced either, and both tools say so."""
    path = tmp_path / "four.py"
    path.write_text(FOUR)
    _veto_last(monkeypatch)
    lesson, _ = run_explain(path)
    fates = [(o.region, o.fate, o.because) for o in lesson.groups[0].outcomes]
    assert fates == [(0, Fate.WITH_GROUP, 3), (1, Fate.WITH_GROUP, 3), (2, Fate.WITH_GROUP, 3),
                     (3, Fate.REFUSED, None)]  # fmt: skip
    text = verify_text(run_verify(path))
    for k in range(3):
        assert f"region {k}: not replaced, the group is refused for region 3 (RPL-11)" in text
    assert "region 3: refused, RPL-11" in text and "planted veto" in text


def test_rpl26_replaced_regions_say_by_which_call() -> None:
    def model(x: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            x = torch.relu(x * 2.0) + 1.0
        return x

    lesson = lesson_of("m", capture(model, (torch.randn(3, 3),)))
    assert [o.text() for o in lesson.groups[0].outcomes] == [
        "region 0: replaced by invoke_subgraph (subgraph_0)",
        "region 1: replaced by invoke_subgraph_1 (subgraph_0)",
    ]


def _claimed(x: torch.Tensor) -> list[torch.Tensor]:
    outs = [torch.sin(x * 2.0) for _ in range(4)]
    return outs + [torch.cos(outs[k]) for k in range(2)]


def test_exp14_a_kept_group_names_its_claimed_members_and_their_owner() -> None:
    """The cos group takes the first two sins (EXP-4): the sin group grows from the other two,
    and explain says where the first two went."""
    lesson = lesson_of("m", capture(_claimed, (torch.randn(3),)))
    sins = next(g for g in lesson.groups if g.claimed_roots)
    assert sins.claimed_roots == ("sin", "sin_1") and len(sins.roots) == 2
    assert sins.claimed_in == ("sin (group 0 region 0)", "sin_1 (group 0 region 1)")
    assert "not roots, already claimed (EXP-4): sin (group 0 region 0)" in render_text(lesson)


def _constant_regions(x: torch.Tensor) -> torch.Tensor:
    outs = [torch.ones(3).sin().cos() for _ in range(2)]
    return x + outs[0] * outs[1]


def test_rpl26_a_whole_group_refusal_is_told_on_every_region() -> None:
    """RPL-5 refuses the group itself: each region says it is not replaced, and why."""
    lesson = lesson_of("m", capture(_constant_regions, (torch.rand(3),)))
    lines = [o.text() for o in lesson.groups[0].outcomes]
    assert len(lines) == len(lesson.groups[0].regions) == 2
    assert all(line.startswith(f"region {k}: not replaced, the group is refused: RPL-5")
               for k, line in enumerate(lines))  # fmt: skip
    assert all(o.fate is Fate.WITH_GROUP and o.because is None for o in lesson.groups[0].outcomes)
