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

import torch.fx

from checker.io.device import device_of, on_device
from checker.io.model_file import load_model_file
from checker.io.out_paths import marked
from checker.io.reports import plural
from checker.io.user_code import shown_name
from checker.tools.checked_pipeline import gated_deduplicate
from checker.tools.outcomes import RegionOutcome, region_fates
from checker.tools.refusals import StepContext, StepLine, step_lines
from checker.tools.shortfall import (
    DroppedGroup,
    KeyedApart,
    claimed_roots,
    dropped_group,
    keyed_apart,
)
from reference.dynamo.capture import Capture, capture
from reference.errors import FxOracleError
from reference.expand.lockstep import GroupExpansion
from reference.expand.regions import RegionSearch, search_regions
from reference.fx_helpers import NodeIndex
from reference.graph_copy import copy_graph_module
from reference.torch_version import TORCH
from reference.track.keys import NodeKey

Keys = Mapping[torch.fx.Node, NodeKey]


@dataclass(frozen=True, slots=True)
class GroupLesson:
    """A kept group: its roots, the members of its bucket already claimed by earlier groups
    (names, and in `claimed_in` each with its owner:
    `mul_1 (group 0 region 2)`), every step, its regions and what became of each."""

    index: int
    roots: tuple[str, ...]
    claimed_roots: tuple[str, ...]
    steps: tuple[StepLine, ...]
    regions: tuple[tuple[str, ...], ...]
    kept: bool
    outcomes: tuple[RegionOutcome, ...] = ()
    claimed_in: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Lesson:
    """The kept groups (all, or the one asked for); and, for the whole model, the groups the
    expansion dropped while some member is in no region, and the near misses of the key
    (EXP-14)."""

    model: str
    nodes: int
    groups: tuple[GroupLesson, ...]
    dropped: tuple[DroppedGroup, ...] = ()
    keyed_apart: tuple[KeyedApart, ...] = ()
    device: str = "cpu"  # where the example inputs lived when captured (FIL-8)

    def to_json(self) -> dict[str, object]:
        return marked(
            "explain",
            {
                "model": self.model,
                "torch": TORCH.version,
                "device": self.device,
                "nodes": self.nodes,
                "groups": [_group_json(g) for g in self.groups],
                "dropped": [d.to_json() for d in self.dropped],
                "keyed_apart": [k.to_json() for k in self.keyed_apart],
            },
        )


def _group_json(g: GroupLesson) -> dict[str, object]:
    return {
        "index": g.index,
        "roots": list(g.roots),
        "claimed_roots": list(g.claimed_roots),
        "claimed_in": list(g.claimed_in),
        "kept": g.kept,
        "regions": [list(r) for r in g.regions],
        "outcomes": [o.text() for o in g.outcomes],
        "region_outcomes": [o.to_json() for o in g.outcomes],
        "steps": [s.to_json() for s in g.steps],
    }


def _lesson(
    search: RegionSearch, keys: Keys, index: int, g: GroupExpansion, owners: dict[NodeIndex, str]
) -> GroupLesson:
    """The group's steps, each refusal with what differs (EXP-10); then its regions are
    recorded in `owners` for the groups after it."""
    view = search.view
    ctx = StepContext(view, search.nodes, keys, [[r[-1]] for r in g.regions], owners)
    claimed = claimed_roots(search, g, owners)
    owners.update((n, f"group {index} region {k}") for k, r in enumerate(g.regions) for n in r)
    return GroupLesson(
        index=index,
        roots=tuple(view.names[r[-1]] for r in g.regions),
        claimed_roots=tuple(view.names[c] for c in g.claimed_roots),
        steps=step_lines(ctx, g.steps),
        regions=tuple(tuple(view.names[i] for i in r) for r in g.regions),
        kept=g.kept,
        claimed_in=claimed,
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
    fxoracle tool does) and tells, per group, what became of each region, with the invariant
    that refused it. Without `group` it also tells which groups the expansion dropped and
    which nodes keyed apart by a single field (EXP-14).
    """
    search = search_regions(captured.gm.graph, captured.tracker.buckets())
    kept_count = sum(g.kept for g in search.expansion.groups)
    if group is not None and not 0 <= group < kept_count:
        raise FxOracleError(f"--group {group}: the model has {plural(kept_count, 'region group')}")
    keys = captured.tracker.node_to_key
    lessons, dropped = _group_fates(search, keys)
    result = gated_deduplicate(captured.gm, captured.tracker, search)
    chosen = tuple(
        replace(x, outcomes=region_fates(result, x.index, len(x.regions)))
        for x in lessons
        if group is None or x.index == group
    )
    device = device_of(captured.example_inputs)
    if group is not None:
        return Lesson(name, len(search.view), chosen, device=device)
    lost = tuple(d for d in dropped if d.lost)
    apart = keyed_apart(search, keys, call_sites=not lessons)
    return Lesson(name, len(search.view), chosen, lost, apart, device)


def group_lessons(search: RegionSearch, keys: Keys) -> list[GroupLesson]:
    """Each kept group's lesson, its steps and what differs at each refusal (no outcomes:
    those come from the replacement). `verify --html` shows these too."""
    return _group_fates(search, keys)[0]


def _group_fates(search: RegionSearch, keys: Keys) -> tuple[list[GroupLesson], list[DroppedGroup]]:
    """The kept groups' lessons and the dropped groups, in the expansion's order; a node is
    named by the first group that claimed it (EXP-14)."""
    owners: dict[NodeIndex, str] = {}
    lessons: list[GroupLesson] = []
    dropped: list[DroppedGroup] = []
    for g in search.expansion.groups:
        if g.kept:
            lessons.append(_lesson(search, keys, len(lessons), g, owners))
        else:
            dropped.append(dropped_group(search, keys, g, owners))
    return lessons, dropped


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
        if g.claimed_in:
            out.append(f"  not roots, already claimed (EXP-4): {', '.join(g.claimed_in)}")
        out.extend(f"  {o.text()}" for o in g.outcomes)
        out.append("")
    return "\n".join(out + _shortfall_text(lesson))


def _shortfall_text(lesson: Lesson) -> list[str]:
    """The dropped groups, each with its steps, and the near misses of the key (EXP-14)."""
    if not lesson.dropped and not lesson.keyed_apart:
        return []
    head = "Why not more groups" if lesson.groups else "No region group: why"
    out = [f"{head} (EXP-14)", ""]
    for d in lesson.dropped:
        out.append(f"Dropped group of {', '.join(d.members)}: {d.why}")
        if d.claimed:
            out.append(f"  already claimed: {', '.join(d.claimed)}")
        for k, s in enumerate(d.steps):
            out.append(f"  step {k + 1}: [{', '.join(s.candidates)}] -> {step_verdict(s)}")
    out.extend(x.text() for x in lesson.keyed_apart)
    return [*out, ""]
