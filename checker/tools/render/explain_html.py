"""`fxoracle explain --html`: the regions of each group drawn growing, one frame per step
(spec chapter 02).

Frame 0 shows the roots; every accepted step adds one node per region, filled in the group's
colour and tagged `g<group> r<region>`. Every step is listed, refusals with the region that
refused and what differs; up to `MAX_FRAMES` accepted steps per group, evenly spaced and the
last always among them, are drawn. A frame draws the group's final regions side by side, one
band per region with its direct inputs, so corresponding nodes stand in corresponding places
and the figure is as tall as one region; at most `MAX_BANDS` regions are drawn (the others grow
in lock-step with them, and the page says so).
"""

from __future__ import annotations

import html

import torch.fx

from checker.io.reports import plural
from checker.tools.explain import GroupLesson, Lesson, group_shape, step_verdict
from checker.tools.render.drawing import Box, Drawing, layout, node_box, svg_of
from checker.tools.render.html_report import PAGE_HEAD, figure
from reference.fx_helpers import unique_node_args

MAX_FRAMES = 6  # drawn steps per group (matplotlib frames are slow); every step is listed
MAX_BANDS = 3  # regions drawn per frame
BAND_GAP = 0.6  # space between two regions' bands, in box widths

Position = tuple[float, float]


def render_explain_html(lesson: Lesson, graph: torch.fx.Graph) -> str:
    """One self-contained page: per group, the frames of its growth and the outcome."""
    by_name = {n.name: n for n in graph.nodes}
    parts = [PAGE_HEAD.format(title=html.escape(f"how the regions of {lesson.model} grow"))]
    for group in lesson.groups:
        parts.extend(_group_section(group, by_name))
    parts.append("</body>\n</html>\n")
    return "\n".join(parts)


def _group_section(group: GroupLesson, by_name: dict[str, torch.fx.Node]) -> list[str]:
    parts = [f"<h2>Group {group.index}: {group_shape(group)}</h2>"]
    if len(group.regions) > MAX_BANDS:
        hidden = plural(len(group.regions) - MAX_BANDS, "region")
        parts.append(f'<p class="note">Regions 0-{MAX_BANDS - 1} drawn; the other {hidden} '
                     "grow in lock-step with them.</p>")  # fmt: skip
    joined = {root: k for k, root in enumerate(group.roots)}
    parts.append(_frame(group, joined, by_name, "roots"))
    accepted = [i for i, s in enumerate(group.steps) if s.joined]
    drawn = set(accepted[:: max(1, -(-len(accepted) // MAX_FRAMES))] + accepted[-1:])
    for number, step in enumerate(group.steps, start=1):
        text = f"step {number}: [{', '.join(step.candidates)}] -> {step_verdict(step)}"
        if step.joined:
            joined.update((name, k) for k, name in enumerate(step.candidates))
        if number - 1 in drawn:
            parts.append(_frame(group, joined, by_name, text))
        else:
            parts.append(f'<p class="note">{html.escape(text)}</p>')
    parts += [f'<p class="note">{html.escape(o.text())}</p>' for o in group.outcomes]
    return parts


def _frame(
    group: GroupLesson, joined: dict[str, int], by_name: dict[str, torch.fx.Node], title: str
) -> str:
    """The final regions, each in its band with its inputs, the nodes joined so far in colour."""
    boxes: list[Box] = []
    pos: dict[str, Position] = {}
    left = 0.0
    for region in group.regions[:MAX_BANDS]:
        band = _band(region, joined, by_name, group.index, set(pos))
        placed = layout(band)
        xs = [x for x, _ in placed.values()]
        pos.update({key: (x - min(xs) + left, y) for key, (x, y) in placed.items()})
        left += max(xs) - min(xs) + 1 + BAND_GAP
        boxes.extend(band.boxes)
    shown = set(pos)
    edges = tuple((a.name, b.key) for b in boxes for a in unique_node_args(by_name[b.key])
                  if a.name in shown)  # fmt: skip
    salt = f"g{group.index}-{len(joined)}"
    svg = svg_of(Drawing(tuple(boxes), edges, title), salt, pos)
    return f"<h3>{html.escape(title)}</h3>\n" + figure(svg, salt)


def _band(
    region: tuple[str, ...],
    joined: dict[str, int],
    by_name: dict[str, torch.fx.Node],
    group: int,
    taken: set[str],
) -> Drawing:
    """One region and those of its direct inputs no earlier band shows, in graph order."""
    shown: dict[str, None] = {}
    for name in region:
        shown.update((a.name, None) for a in unique_node_args(by_name[name]) if a.name not in taken)
        shown[name] = None
    order = {n: i for i, n in enumerate(by_name)}
    names = sorted(shown, key=order.__getitem__)
    boxes = tuple(node_box(by_name[n], (group, joined[n]) if n in joined else None) for n in names)
    edges = tuple(
        (a.name, n) for n in names for a in unique_node_args(by_name[n]) if a.name in shown
    )
    return Drawing(boxes, edges, "")
