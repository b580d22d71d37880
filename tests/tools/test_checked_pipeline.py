"""The verify pipeline computes each thing once and passes it down (overview, "Layout")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch.fx

import reference.expand.lockstep
from checker.proof.gate import ReplacementGate
from checker.tools.explain import run_explain
from checker.tools.verify import run_verify
from reference.expand.lockstep import Expansion, GraphView, expand
from reference.replace.legality import Ruling
from reference.replace.plan import OutlinePlan
from tests.support.paths import EXAMPLES


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    def counted(view: GraphView, *, fast: bool = False) -> Expansion:
        calls.append(len(view))
        return expand(view, fast=fast)

    monkeypatch.setattr(reference.expand.lockstep, "expand", counted)
    return calls


def test_verify_expands_the_regions_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    report = run_verify(EXAMPLES / "transformer.py")
    assert report.ok and report.result.dedup.replaced
    assert calls == [report.nodes]  # one expansion, of the whole captured graph


def test_explain_expands_once_and_goes_through_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    asked: list[int] = []
    original = ReplacementGate.__call__

    def counted(
        self: ReplacementGate, group: Sequence[Sequence[torch.fx.Node]], plan: OutlinePlan
    ) -> Ruling:
        asked.append(len(group))
        return original(self, group, plan)

    monkeypatch.setattr(ReplacementGate, "__call__", counted)
    lesson, _ = run_explain(EXAMPLES / "transformer.py")
    assert len(calls) == 1
    assert asked == [3]  # the gate saw the one group, its 3 regions (RPL-11)
    assert all(o.text().endswith("(subgraph_0)") for o in lesson.groups[0].outcomes)
