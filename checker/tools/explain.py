"""`fxoracle explain`: the expansion and the replacement narrated step by step, as a lesson
(spec chapters 02 and 03).

For each group (latest first, EXP-2) it names the roots, then every lock-step: the candidate of
each region and whether they joined, or which region refused and under which invariant; then
which regions became `invoke_subgraph` calls and which were refused, and why (RPL ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import torch.fx

from checker.io.device import device_of, on_device
from checker.io.model_file import load_model_file
from checker.io.reports import plural
from checker.io.user_code import shown_name
from checker.tools.checked_pipeline import gated_deduplicate
from checker.tools.outcomes import region_outcomes
from checker.tools.refusals import StepContext, refusal_detail
from reference.dynamo.capture import Capture, capture
from reference.errors import FxOracleError
from reference.expand.lockstep import GroupExpansion
from reference.expand.regions import RegionSearch, search_regions
from reference.fx_helpers import NodeIndex
from reference.graph_copy import copy_graph_module
from reference.key.keys import NodeKey
from reference.torch_version import TORCH

Keys = Mapping[torch.fx.Node, NodeKey]


@dataclass(frozen=True, slots=True)
class StepLine:
    candidates: tuple[str, ...]
    joined: bool
    refused_region: int | None
    reason: str | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class GroupLesson:
    index: int
    roots: tuple[str, ...]
    claimed_roots: tuple[str, ...]
    steps: tuple[StepLine, ...]
    regions: tuple[tuple[str, ...], ...]
    kept: bool
    outcomes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Lesson:
    model: str
    nodes: int
    groups: tuple[GroupLesson, ...]
    device: str = "cpu"  # where the example inputs lived when captured (FIL-8)

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "torch": TORCH.version,
            "device": self.device,
            "nodes": self.nodes,
            "groups": [_group_json(g) for g in self.groups],
        }


def _group_json(g: GroupLesson) -> dict[str, object]:
    return {
        "index": g.index,
        "roots": list(g.roots),
        "claimed_roots": list(g.claimed_roots),
        "kept": g.kept,
        "regions": [list(r) for r in g.regions],
        "outcomes": list(g.outcomes),
        "steps": [
            {
                "candidates": list(s.candidates),
                "joined": s.joined,
                "reason": s.reason,
                "detail": s.detail,
            }
            for s in g.steps
        ],
    }


def _lesson(
    search: RegionSearch, keys: Keys, index: int, g: GroupExpansion, earlier: dict[NodeIndex, str]
) -> GroupLesson:
    """The group's steps, each refusal with what differs (EXP-10); then its regions are
    recorded in `earlier` for the groups after it."""
    view = search.view
    regions = [[r[-1]] for r in g.regions]
    steps = []
    for step in g.steps:
        ctx = StepContext(view, search.nodes, keys, regions, earlier)
        names = tuple("-" if c is None else view.names[c] for c in step.candidates)
        reason = None if step.reason is None else str(step.reason)
        steps.append(StepLine(names, step.accepted, step.refused_region, reason,
                              refusal_detail(ctx, step)))  # fmt: skip
        if step.accepted:
            for region, c in zip(regions, step.candidates, strict=True):
                region.append(cast("NodeIndex", c))
    earlier.update((n, f"group {index} region {k}") for k, r in enumerate(g.regions) for n in r)
    return GroupLesson(
        index=index,
        roots=tuple(view.names[r[-1]] for r in g.regions),
        claimed_roots=tuple(view.names[r] for r in g.claimed_roots),
        steps=tuple(steps),
        regions=tuple(tuple(view.names[i] for i in r) for r in g.regions),
        kept=g.kept,
    )


def run_explain(
    path: Path, group: int | None = None, device: torch.device | None = None
) -> tuple[Lesson, torch.fx.GraphModule]:
    """Capture the model file on `device` (default: where its inputs live, FIL-8) and narrate
    every kept group (or `group`); also return a copy of the graph as captured, before the
    replacement, for drawing."""
    model_file = on_device(load_model_file(path), device)
    captured = capture(model_file.model, model_file.example_inputs, model_file.dynamic)
    original = copy_graph_module(captured.gm).gm
    return lesson_of(shown_name(path), captured, group), original


def lesson_of(name: str, captured: Capture, group: int | None = None) -> Lesson:
    """The lesson for an already captured graph; `group` picks one kept group by index.

    After the expansion it deduplicates the graph (in place, behind the checker's gate, as every
    fxoracle tool does) and tells, per group, which regions became calls and which were refused,
    with the invariant that refused them.
    """
    search = search_regions(captured.gm.graph, captured.tracker.buckets())
    kept = [g for g in search.expansion.groups if g.kept]
    if group is not None and not 0 <= group < len(kept):
        raise FxOracleError(f"--group {group}: the model has {plural(len(kept), 'region group')}")
    earlier: dict[NodeIndex, str] = {}
    keys = captured.tracker.node_to_key
    lessons = [_lesson(search, keys, i, g, earlier) for i, g in enumerate(kept)]
    result = gated_deduplicate(captured.gm, captured.tracker, search)
    chosen = tuple(
        replace(lesson, outcomes=tuple(region_outcomes(result, lesson.index)))
        for lesson in lessons
        if group is None or lesson.index == group
    )
    return Lesson(name, len(search.view), chosen, device_of(captured.example_inputs))


def step_verdict(s: StepLine) -> str:
    """`all join`, or `refused by region k: <id and rule> (<what differs>)`."""
    if s.joined:
        return "all join"
    detail = f" ({s.detail})" if s.detail else ""
    return f"refused by region {s.refused_region}: {s.reason}{detail}"


def group_shape(g: GroupLesson) -> str:
    """`3 regions x 5 nodes`."""
    return f"{plural(len(g.regions), 'region')} x {plural(len(g.regions[0]), 'node')}"


def render_text(lesson: Lesson) -> str:
    """The lesson as prose, one line per step."""
    head = f"{plural(lesson.nodes, 'node')}, {TORCH.label}, {lesson.device}"
    out = [f"fxoracle explain: {lesson.model} ({head})", ""]
    for g in lesson.groups:
        grow = plural(len(g.regions), "region")
        out.append(f"Group {g.index}: {grow} grow from roots {', '.join(g.roots)}")
        for k, s in enumerate(g.steps):
            cands = ", ".join(s.candidates)
            out.append(f"  step {k + 1}: [{cands}] -> {step_verdict(s)}")
        out.append(f"  result: {group_shape(g)}")
        out.append("    representative: [" + ", ".join(g.regions[0]) + "]")
        out.extend(f"  {line}" for line in g.outcomes)
        out.append("")
    return "\n".join(out)
