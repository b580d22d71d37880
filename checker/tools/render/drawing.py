"""Drawing a graph for the HTML pages: boxes, layers and the inline SVG (spec chapter 06,
reports).

`drawing_of(graph, membership)` says what to draw: one box per node, region k of group g filled
in group g's colour and tagged `g<g> r<k>`; graphs above `FULL_LIMIT` nodes are drawn condensed,
one box per region and one per run of consecutive nodes outside any region (runs are cut into
pieces). `svg_of(drawing, salt)` draws it with matplotlib as an inline SVG: no script, no
external URL, nothing fetched. Layers come from `networkx.topological_generations` (inputs are
moved to the layer above their first user, so a model's weights sit next to the op that reads
them); a layer wider than `ROW_WIDTH` wraps onto several rows, which cannot reorder anything
because nodes of one layer never depend on each other. Same arguments, same bytes: SVG ids are
salted per drawing.
"""

from __future__ import annotations

import colorsys
import html
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib
import networkx as nx
import torch.fx
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch
from matplotlib.text import Text

from checker.io.reports import plural
from reference.fx_helpers import unique_node_args
from reference.names import qualified_name

FULL_LIMIT = 250  # nodes: above this a graph is drawn condensed
BOX_LIMIT = 250  # boxes of a condensed drawing; later ones are left out (and the page says so)
ROW_WIDTH = 8  # boxes per row
RUN_SHARE, RUN_MIN = 100, 50  # a condensed run: at most 1/100 of the nodes, or 50 nodes
PALETTE = ("#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5",
           "#ffed6f", "#bc80bd", "#ccebc5")  # fmt: skip
PLAIN = "#ffffff"  # nodes outside every region
EDGE = "#444444"

Membership = Mapping[str, tuple[int, int]]  # node name -> (group, region)


def group_colour(group: int) -> str:
    """The fill colour of group `group`: the palette, then hues spread by the golden ratio."""
    if group < len(PALETTE):
        return PALETTE[group]
    r, g, b = colorsys.hsv_to_rgb((group * 0.618034) % 1.0, 0.45, 0.95)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


@dataclass(frozen=True, slots=True)
class Box:
    """One box of a drawing: a node, a region or a run of nodes."""

    key: str
    label: str
    fill: str


@dataclass(frozen=True, slots=True)
class Drawing:
    """What to draw: boxes in graph order, edges between box keys, and what was condensed."""

    boxes: tuple[Box, ...]
    edges: tuple[tuple[str, str], ...]
    note: str


# -- what to draw ------------------------------------------------------------------------------
def drawing_of(graph: torch.fx.Graph, membership: Membership) -> Drawing:
    """Every node when the graph is small enough, else the condensed view."""
    nodes = list(graph.nodes)
    if len(nodes) > FULL_LIMIT:
        return _condensed(nodes, membership)
    boxes = tuple(node_box(n, membership.get(n.name)) for n in nodes)
    edges = tuple((a.name, n.name) for n in nodes for a in unique_node_args(n))
    return Drawing(boxes, edges, f"{plural(len(nodes), 'node')}, every node drawn.")


def node_box(node: torch.fx.Node, place: tuple[int, int] | None) -> Box:
    tag = "" if place is None else f" (g{place[0]} r{place[1]})"
    fill = PLAIN if place is None else group_colour(place[0])
    what = _what(node)
    second = "" if what == node.name else f"\n{what}"
    return Box(node.name, f"{_short(_display(node.name))}{tag}{second}", fill)


def _display(name: str) -> str:
    """Dynamo's parameter names, shorter: `l_self_modules_blocks_modules_0_modules_qkv_
    parameters_weight_` reads `l_self.blocks.0.qkv.weight_` (only on the page)."""
    for part in ("_modules_", "_parameters_", "_buffers_"):
        name = name.replace(part, ".")
    return name


def _what(node: torch.fx.Node) -> str:
    """A short description of what a node does: `linear.default`, `relu`, `input`."""
    if node.op in _OP_WORDS:
        return _OP_WORDS[node.op]
    name = qualified_name(node.target)
    if node.op == "call_function":
        name = name.removeprefix("aten.") if name.startswith("aten.") else name.rsplit(".")[-1]
    return _short(name)


_OP_WORDS = {"placeholder": "input", "get_attr": "attribute", "output": "output"}


def _short(text: str, limit: int = 26, most: int = 3) -> str:
    """`text` on lines of at most `limit` characters, broken after a `.` or `_` where one falls
    in the line (else at the limit), so two names that differ only in the middle
    (`blocks.0.norm2` and `blocks.1.norm2`) stay told apart. At most `most` lines, so boxes
    keep their row: a longer text loses its start, the same way for every label (`…` first)."""
    lines: list[str] = []
    while len(text) > limit:
        cut = max(text.rfind(".", 1, limit), text.rfind("_", 1, limit)) + 1
        cut = cut if cut > 1 else limit
        lines.append(text[:cut])
        text = text[cut:]
    lines.append(text)
    if len(lines) <= most:
        return "\n".join(lines)
    tail = "…" + "".join(lines)[-(limit * most - 1) :]
    return "\n".join(tail[k : k + limit] for k in range(0, len(tail), limit))


def _condensed(nodes: Sequence[torch.fx.Node], membership: Membership) -> Drawing:
    """One box per region and per run of consecutive nodes outside regions (graph order);
    long runs are cut (`RUN_SHARE`), so a graph without regions is still a chain of boxes."""
    owner = _owners(nodes, membership, max(RUN_MIN, len(nodes) // RUN_SHARE))
    members: dict[str, list[str]] = {}
    for node in nodes:
        members.setdefault(owner[node.name], []).append(node.name)
    edges = dict.fromkeys(
        (owner[a.name], owner[n.name])
        for n in nodes
        for a in unique_node_args(n)
        if owner[a.name] != owner[n.name]
    )
    boxes = [_unit_box(key, names, membership) for key, names in members.items()]
    condensed = plural(len(boxes), "box", "boxes")
    note = f"{plural(len(nodes), 'node')}: condensed to {condensed} (one per region, one per run)"
    if len(boxes) > BOX_LIMIT:
        note += f"; only the first {BOX_LIMIT} are drawn"
        boxes = boxes[:BOX_LIMIT]
    kept = {b.key for b in boxes}
    pairs = tuple(e for e in edges if e[0] in kept and e[1] in kept)
    return Drawing(tuple(boxes), pairs, note + ".")


def _owners(nodes: Sequence[torch.fx.Node], membership: Membership, cap: int) -> dict[str, str]:
    """Each node's box key: `g<g>r<r>` for region nodes, `run<i>` for the others."""
    owner: dict[str, str] = {}
    run, size, after_region = 0, 0, False
    for node in nodes:
        place = membership.get(node.name)
        if place is None:
            if after_region or size == cap:
                run, size = run + 1, 0
            size += 1
        owner[node.name] = f"run{run}" if place is None else f"g{place[0]}r{place[1]}"
        after_region = place is not None
    return owner


def _unit_box(key: str, names: Sequence[str], membership: Membership) -> Box:
    place = membership.get(names[0])
    span = names[0] if len(names) == 1 else f"{_short(names[0], 14)}..{_short(names[-1], 14)}"
    if place is None:
        return Box(key, f"{plural(len(names), 'node')}\n{span}", PLAIN)
    return Box(
        key,
        f"g{place[0]} r{place[1]}: {plural(len(names), 'node')}\n{span}",
        group_colour(place[0]),
    )


# -- how to draw it ----------------------------------------------------------------------------
def layout(drawing: Drawing) -> dict[str, tuple[float, float]]:
    """(x, y) per box: one row per layer (wrapped at `ROW_WIDTH`), rows centred, y down."""
    rows: dict[int, list[str]] = {}
    layer = _layers(drawing)
    for box in drawing.boxes:
        rows.setdefault(layer[box.key], []).append(box.key)
    pos: dict[str, tuple[float, float]] = {}
    y = 0
    for index in sorted(rows):
        keys = rows[index]
        for start in range(0, len(keys), ROW_WIDTH):
            chunk = keys[start : start + ROW_WIDTH]
            pos.update({k: (j - (len(chunk) - 1) / 2, float(-y)) for j, k in enumerate(chunk)})
            y += 1
    return pos


def _layers(drawing: Drawing) -> dict[str, int]:
    """Topological generations, sources moved just above their first user; graph order when
    the drawing has a cycle (a condensed region that a run both feeds and reads)."""
    dg: nx.DiGraph[str] = nx.DiGraph()
    dg.add_nodes_from(b.key for b in drawing.boxes)
    dg.add_edges_from(drawing.edges)
    try:
        generations = list(nx.topological_generations(dg))
    except nx.NetworkXUnfeasible:
        return {b.key: i for i, b in enumerate(drawing.boxes)}
    layer = {key: i for i, generation in enumerate(generations) for key in generation}
    for key in dg.nodes:
        users = list(dg.successors(key))
        if users and dg.in_degree(key) == 0:
            layer[key] = min(layer[u] for u in users) - 1
    return layer


_NO_METADATA: dict[str, str | None] = {"Date": None, "Creator": None, "Format": None, "Type": None}
_PLAIN_ID = re.compile(r' id="[A-Za-z0-9]+_[0-9]+"')  # matplotlib's per-figure ids: figure_1


def svg_of(
    drawing: Drawing, salt: str, pos: Mapping[str, tuple[float, float]] | None = None
) -> str:
    """The drawing as an inline `<svg>` element, sized to its boxes; `salt` keeps its
    clip-path ids unique; `pos` places the boxes (default: `layout`, one row per layer)."""
    pos = layout(drawing) if pos is None else pos
    xs, ys = [x for x, _ in pos.values()], [y for _, y in pos.values()]
    cols, rows = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    size = (max(3.0, cols * 1.75), max(1.0, rows * 0.55))  # the page scrolls a wide figure
    with matplotlib.rc_context(
        {"svg.hashsalt": salt, "svg.fonttype": "none", "font.family": "DejaVu Sans"}
    ):
        fig = Figure(figsize=size, dpi=72)  # 72: the SVG's unit, so the clipping below holds
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_axis_off()
        ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
        ax.set_ylim(min(ys) - 0.5, max(ys) + 0.5)
        texts = {b.key: _box_text(ax, pos[b.key], b) for b in drawing.boxes}
        fig.draw_without_rendering()  # places the boxes, so arrows stop at their edges
        for a, b in drawing.edges:
            ax.add_patch(_arrow(pos[a], pos[b], texts[a], texts[b]))
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata=_NO_METADATA)
    svg = _compact(out.getvalue())
    return svg.replace("<svg ", f'<svg class="drawing" data-salt="{html.escape(salt)}" ', 1)


_DECIMALS = re.compile(r"(\d\.\d)\d+")  # coordinates to a tenth of a point: 1/720 inch
_INDENT = re.compile(r"\n +")
_CLIP = re.compile(r' clip-path="url\(#[0-9a-z]+\)"')  # the axes' clip: every box is inside
_STYLES = {  # matplotlib repeats each style on every element; one CSS class each instead
    "fill: none; stroke: #444444; stroke-width: 0.6; stroke-linecap: round": "e",
    "fill: #444444; stroke: #444444; stroke-width: 0.6; stroke-linecap: round": "h",
    "font-size: 7px; font-family: 'DejaVu Sans'": "t",
}
_BOX = re.compile(r'style="fill: (#[0-9a-f]+); stroke: #444444; stroke-width: 0.8; '
                  r'stroke-linejoin: miter"')  # fmt: skip


def _compact(svg: str) -> str:
    """matplotlib's SVG, same picture, fewer bytes: no ids, no clip of the whole axes,
    coordinates to a tenth of a point, one line per path, repeated styles as classes."""
    svg = _PLAIN_ID.sub("", svg[svg.index("<svg") :])
    svg = _CLIP.sub("", _DECIMALS.sub(r"\1", svg)).replace(" \n", " ")
    svg = _INDENT.sub("\n", _BOX.sub(r'class="b" style="fill: \1"', svg))
    for style, name in _STYLES.items():
        svg = svg.replace(f'style="{style}"', f'class="{name}"')
    css = "".join(f" .{name} {{{style}}}" for style, name in _STYLES.items())
    css += " .b {stroke: #444444; stroke-width: 0.8; stroke-linejoin: miter}"
    return svg.replace("</style>", f"{css}</style>", 1)


def _box_text(ax: Axes, at: tuple[float, float], box: Box) -> Text:
    frame = {"boxstyle": "square,pad=0.35", "fc": box.fill, "ec": EDGE, "lw": 0.8}
    # parse_math=False: a label is text, never TeX (a module named `$x^$` crashed mathtext)
    return ax.text(*at, box.label, ha="center", va="center", fontsize=7, zorder=2, bbox=frame,
                   parse_math=False)  # fmt: skip


def _arrow(a: tuple[float, float], b: tuple[float, float], ta: Text, tb: Text) -> FancyArrowPatch:
    return FancyArrowPatch(
        a, b, arrowstyle="-|>", mutation_scale=7, color=EDGE, lw=0.6, shrinkA=0, shrinkB=0,
        patchA=ta.get_bbox_patch(), patchB=tb.get_bbox_patch(), zorder=1,
    )  # fmt: skip
