"""`fxoracle explain --html`: the regions of each group drawn growing, one frame per step
(spec chapter 02).

Frame 0 shows the roots; every accepted step adds one node per region, filled in the group's
colour and tagged `g<group> r<region>`. Every step is listed; up to `MAX_FRAMES` accepted steps
per group, evenly spaced and the last always among them, are drawn.
Each frame draws only the group's final regions and their direct inputs, so it stays readable
on large graphs.
"""

from __future__ import annotations

import html

import torch.fx

from checker.tools.explain import GroupLesson, Lesson
from checker.tools.render.html_report import PAGE_HEAD, Box, Drawing, figure, node_box, svg_of
from reference.fx_helpers import unique_node_args

MAX_FRAMES = 6  # drawn steps per group (matplotlib frames are slow); every step is listed


def render_explain_html(lesson: Lesson, graph: torch.fx.Graph) -> str:
    """One self-contained page: per group, the frames of its growth and the outcome."""
    by_name = {n.name: n for n in graph.nodes}
    parts = [PAGE_HEAD.format(title=html.escape(f"explain {lesson.model}"))]
    parts.append(f"<h1>How the regions of {html.escape(lesson.model)} grow</h1>")
    for group in lesson.groups:
        parts.extend(_group_section(group, by_name))
    parts.append("</body>\n</html>\n")
    return "\n".join(parts)


def _group_section(group: GroupLesson, by_name: dict[str, torch.fx.Node]) -> list[str]:
    shape = f"{len(group.regions)} regions x {len(group.regions[0])} nodes"
    parts = [f"<h2>Group {group.index}: {shape}</h2>"]
    joined = {root: k for k, root in enumerate(group.roots)}
    parts.append(_frame(group, joined, by_name, "roots"))
    accepted = [i for i, s in enumerate(group.steps) if s.joined]
    drawn = set(accepted[:: max(1, -(-len(accepted) // MAX_FRAMES))] + accepted[-1:])
    for number, step in enumerate(group.steps, start=1):
        candidates = ", ".join(step.candidates)
        verdict = "join" if step.joined else f"refused: {step.reason}"
        text = f"step {number}: [{candidates}] {verdict}"
        if step.joined:
            joined.update((name, k) for k, name in enumerate(step.candidates))
        if number - 1 in drawn:
            parts.append(_frame(group, joined, by_name, text))
        else:
            parts.append(f'<p class="note">{html.escape(text)}</p>')
    parts += [f'<p class="note">{html.escape(line)}</p>' for line in group.outcomes]
    return parts


def _frame(
    group: GroupLesson, joined: dict[str, int], by_name: dict[str, torch.fx.Node], title: str
) -> str:
    """The final regions and their inputs, with the nodes joined so far in colour."""
    shown: dict[str, None] = {}
    for region in group.regions:
        for name in region:
            shown.update((a.name, None) for a in unique_node_args(by_name[name]))
            shown[name] = None
    order = {n: i for i, n in enumerate(by_name)}
    names = sorted(shown, key=order.__getitem__)
    boxes: list[Box] = []
    for name in names:
        place = (group.index, joined[name]) if name in joined else None
        boxes.append(node_box(by_name[name], place))
    edges = tuple(
        (a.name, name) for name in names for a in unique_node_args(by_name[name]) if a.name in shown
    )
    drawing = Drawing(tuple(boxes), edges, title)
    salt = f"g{group.index}-{len(joined)}"
    return f"<h3>{html.escape(title)}</h3>\n" + figure(svg_of(drawing, salt), salt)
