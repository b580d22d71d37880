"""What differs when a lock-step is refused: one short phrase per refusal, for `fxoracle
explain` (spec chapter 02, EXP-3..EXP-8, EXP-10).

The expansion records which region refused a step and under which id; this module says what
the reader would otherwise have to find out with a script: which key field differs and both
values (EXP-6), which region holds a claimed node (EXP-4), which region shares a candidate
(EXP-7), which outside user leads back to the root (EXP-8). It reads the graph view, the
tracker's keys and the regions as they were at that step; it decides nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import cast

import torch.fx

from checker.io.reports import plural
from reference.expand.lockstep import GraphView, Step, StepRefusal, ancestors
from reference.fx_helpers import NodeIndex
from reference.track.keys import NodeKey

Difference = tuple[str, object, object]  # (field path, region 0's value, the other value)
# the key fields a reader looks at first: what the node does, then with what, then where
_FIRST = ("op", "target", "args", "kwarg_names", "kwargs", "global_state", "call_site")


def key_differences(a: object, b: object, path: str = "") -> list[Difference]:
    """The leaves where two keys (or any frozen dataclass trees) differ, by field path:
    `[("args[1].value", "'0.5'", "'2.0'")]`; a field of another type differs whole."""
    if is_dataclass(a) and type(a) is type(b):
        found: list[Difference] = []
        for f in (f for f in fields(a) if f.compare):
            inner = f"{path}.{f.name}" if path else f.name
            found += key_differences(getattr(a, f.name), getattr(b, f.name), inner)
        return found
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in key_differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [(path, a, b)]


def sorted_differences(a: object, b: object) -> list[Difference]:
    """`key_differences` of two keys, the fields a reader looks at first first."""
    return sorted(key_differences(a, b), key=lambda d: _FIRST.index(top_field(d[0])))


def top_field(path: str) -> str:
    """The key's own field a difference is in: `args` for `args[1].value`."""
    return path.split("[")[0].split(".")[0]


@dataclass(frozen=True, slots=True)
class StepLine:
    """One lock-step as a reader sees it: the candidates' names (`-`: an empty queue), whether
    they joined, else the refusing region, the invariant and what differs."""

    candidates: tuple[str, ...]
    joined: bool
    refused_region: int | None
    reason: str | None
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        return {"candidates": list(self.candidates), "joined": self.joined,
                "reason": self.reason, "detail": self.detail}  # fmt: skip


@dataclass(frozen=True, slots=True)
class StepContext:
    """What a refusal is explained from: the view, the nodes behind it, their keys, the
    regions of this group as they stood before the step, and the regions of earlier kept
    groups (node -> "group g region k")."""

    view: GraphView
    nodes: Sequence[torch.fx.Node]
    keys: Mapping[torch.fx.Node, NodeKey]
    regions: Sequence[Sequence[NodeIndex]]
    earlier: Mapping[NodeIndex, str]


def step_lines(ctx: StepContext, steps: Sequence[Step]) -> tuple[StepLine, ...]:
    """Every step of a group, each refusal with what differs (EXP-10); `ctx.regions` are the
    roots, and each accepted step's candidates join them for the steps after it."""
    regions = [list(r) for r in ctx.regions]
    ctx = replace(ctx, regions=regions)
    lines = []
    for step in steps:
        names = tuple("-" if c is None else ctx.view.names[c] for c in step.candidates)
        reason = None if step.reason is None else str(step.reason)
        lines.append(StepLine(names, step.accepted, step.refused_region, reason,
                              refusal_detail(ctx, step)))  # fmt: skip
        if step.accepted:
            for region, c in zip(regions, step.candidates, strict=True):
                region.append(cast("NodeIndex", c))
    return tuple(lines)


def refusal_detail(ctx: StepContext, step: Step) -> str:
    """What differs, in a phrase: `layer_norm_4: key field args[4].expr is 's1', region 0's
    layer_norm_2 has 's0'`. Empty for an accepted step."""
    k, reason = step.refused_region, step.reason
    if k is None or reason is None:
        return ""
    c = step.candidates[k]
    if c is None:
        return f"region {k} has nothing left to visit"
    name = ctx.view.names[c]
    match reason:
        case StepRefusal.REVISIT | StepRefusal.CLAIMED:
            return f"{name} is already in {_owner(ctx, c)}"
        case StepRefusal.SHARED:
            first = step.candidates.index(c)
            return f"{name} is also region {first}'s candidate: an input both read"
        case StepRefusal.INPUT:
            return f"a {ctx.view.ops[c]}"
        case StepRefusal.DIFFERENT:
            return _different(ctx, step, c)
        case _:
            return _cycle(ctx, k, c) + _also_an_input(ctx, c)


def _owner(ctx: StepContext, c: NodeIndex) -> str:
    for j, region in enumerate(ctx.regions):
        if c in region:
            return f"region {j} of this group"
    return ctx.earlier.get(c, "a region of an earlier group")


def _different(ctx: StepContext, step: Step, c: NodeIndex) -> str:
    """EXP-6: the first differing key field and both values, or why there is no key."""
    c0 = step.candidates[0]
    assert c0 is not None, "EXP-3: region 0 drives the steps"
    a, b = ctx.keys.get(ctx.nodes[c0]), ctx.keys.get(ctx.nodes[c])
    name, name0 = ctx.view.names[c], ctx.view.names[c0]
    if a is None or b is None:
        return f"{name if b is None else name0} is untracked (no key)"
    found = sorted_differences(a, b)
    if not found:
        return f"{name} was taken out of its bucket (node_to_duplicates, TRK-12)"
    path, mine, theirs = found[0]
    more = f" (and {plural(len(found) - 1, 'more field')})" if len(found) > 1 else ""
    return f"{name}: key field {path} is {theirs!r}, region 0's {name0} has {mine!r}{more}"


def _also_an_input(ctx: StepContext, c: NodeIndex) -> str:
    """Region 0's cycle test runs first, as in torch (EXP-3), so a graph input can be refused
    for EXP-8 before EXP-5 is asked: say that EXP-5 refuses it too."""
    op = ctx.view.ops[c]
    return f"; it is a {op}, which EXP-5 refuses too" if op in ("placeholder", "get_attr") else ""


def _cycle(ctx: StepContext, k: int, c: NodeIndex) -> str:
    """EXP-8: a user of `c` outside region k that leads back to the region's root."""
    region = ctx.regions[k]
    root = region[0]
    root_ancestors = ancestors(ctx.view.args, root)
    for u in ctx.view.users[c]:
        if u not in region and u in root_ancestors:
            name, user, root_name = (ctx.view.names[i] for i in (c, u, root))
            return f"{name} is also read by {user}, outside the region, which feeds {root_name}"
    return f"{ctx.view.names[c]} has a user outside the region that feeds its root"
