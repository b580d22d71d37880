"""The HTML report: one self-contained page with a summary table, the graph drawn with its region
groups in colour, and each outlined subgraph drawn (spec chapter 06, reports).

The drawings come from `checker.tools.render.drawing` (matplotlib figures inlined as SVG: no
script, no external URL, nothing fetched). Same arguments, same bytes: SVG ids are salted per
drawing and the page has no timestamp.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence

import torch.fx

from checker.io.reports import plural
from checker.tools.outcomes import region_outcomes

# re-exported: the HTML tests and `checker.tools.render.explain_html` import these from here
from checker.tools.render.drawing import BOX_LIMIT as BOX_LIMIT
from checker.tools.render.drawing import FULL_LIMIT as FULL_LIMIT
from checker.tools.render.drawing import PALETTE as PALETTE
from checker.tools.render.drawing import Box as Box
from checker.tools.render.drawing import Drawing as Drawing
from checker.tools.render.drawing import Membership
from checker.tools.render.drawing import drawing_of as drawing_of
from checker.tools.render.drawing import group_colour as group_colour
from checker.tools.render.drawing import node_box as node_box
from checker.tools.render.drawing import svg_of as svg_of
from checker.tools.verify import VerifyReport, checks_json
from reference.errors import FxOracleError


def verify_page(report: VerifyReport) -> str:
    """The page of one `fxoracle verify` report: its summary, the original graph coloured by
    group, each subgraph."""
    r = report.result
    groups = [
        list(r.search.names(region) for region in g) for g in r.search.expansion.kept_regions()
    ]
    subgraphs = {name: sub.graph for name, sub in r.dedup.subgraphs.items()}
    return render_html(summary_of(report), r.original.graph, groups, subgraphs)


def summary_of(report: VerifyReport) -> dict[str, object]:
    """The summary table's rows, from the typed report: what was found, what became of each
    region, each check."""
    r = report.result
    rows: dict[str, object] = {"model": report.model, "nodes": report.nodes,
                               "region groups": len(groups_of(report))}  # fmt: skip
    for g, group in enumerate(groups_of(report)):
        rows[f"group {g}"] = [f"{plural(len(group), 'region')} x {plural(len(group[0]), 'node')}",
                              *region_outcomes(r.dedup, g, len(group))]  # fmt: skip
    rows["subgraphs"] = {name: len(sub.graph.nodes) for name, sub in r.dedup.subgraphs.items()}
    rows["invoke calls"] = report.invoke_calls
    rows["checks"] = checks_json(r.check)
    rows["obligations"] = [o.line() for o in r.check.obligations]
    if r.split is not None:
        rows["split"] = f"{r.split.policy}: {plural(len(r.split.partitions), 'partition')}"
    rows["ok"] = report.ok
    return rows


def groups_of(report: VerifyReport) -> list[tuple[tuple[int, ...], ...]]:
    return [tuple(tuple(int(i) for i in region) for region in g)
            for g in report.result.search.expansion.kept_regions()]  # fmt: skip


def render_html(
    report: Mapping[str, object],
    graph: torch.fx.Graph,
    groups: Sequence[Sequence[Sequence[str]]],
    subgraphs: Mapping[str, torch.fx.Graph],
) -> str:
    """The page: `report` as a table, `graph` with region k of group g filled in group g's
    colour and tagged `g<g> r<k>`, then every subgraph. `FxOracleError` when a group names a
    node the graph does not have.
    """
    membership = _membership(graph, groups)
    parts = [
        PAGE_HEAD.format(title=html.escape(str(report.get("model", "graph")))),
        "<h2>Summary</h2>",
    ]
    parts.append(_summary_table(report))
    drawing = drawing_of(graph, membership)
    parts += ["<h2>Graph</h2>", f'<p class="note">{html.escape(drawing.note)}</p>']
    parts += [_legend(groups), figure(svg_of(drawing, "graph"), "graph")]
    if subgraphs:
        parts.append("<h2>Subgraphs</h2>")
    for name, sub in subgraphs.items():
        sub_drawing = drawing_of(sub, {})
        note = html.escape(sub_drawing.note)
        parts += [f"<h3>{html.escape(name)}</h3>", f'<p class="note">{note}</p>']
        parts.append(figure(svg_of(sub_drawing, f"sub-{name}"), name))
    parts.append("</body>\n</html>\n")
    return "\n".join(parts)


def _membership(graph: torch.fx.Graph, groups: Sequence[Sequence[Sequence[str]]]) -> Membership:
    """Each region node's (group, region); a node in several regions keeps its first."""
    names = {n.name for n in graph.nodes}
    found: dict[str, tuple[int, int]] = {}
    for g, group in enumerate(groups):
        for r, region in enumerate(group):
            for name in region:
                if name not in names:
                    raise FxOracleError(f"group {g} region {r} names `{name}`, not in the graph")
                found.setdefault(name, (g, r))
    return found


PAGE_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>fxoracle report: {title}</title>
<style>
body {{ font-family: "DejaVu Sans", sans-serif; margin: 1.5em; color: #222; }}
table.summary {{ border-collapse: collapse; }}
table.summary th, table.summary td {{ border: 1px solid #bbb; padding: 2px 8px; text-align: left;
  vertical-align: top; font-size: 13px; }}
pre {{ margin: 0; white-space: pre-wrap; max-width: 1100px; }}
.note {{ color: #555; font-size: 13px; }}
ul.legend {{ list-style: none; padding: 0; font-size: 13px; }}
.swatch {{ display: inline-block; width: 12px; height: 12px; border: 1px solid #444;
  margin-right: 6px; vertical-align: middle; }}
.figure {{ overflow-x: auto; }}
</style>
</head>
<body>
<h1>fxoracle report: {title}</h1>"""


def _summary_table(report: Mapping[str, object]) -> str:
    """One row per key; a long structured value is folded into a `<details>` element."""
    rows = []
    for key, value in report.items():
        if isinstance(value, str | int | float | bool):
            cell = html.escape(str(value))
        else:
            text = json.dumps(value, sort_keys=True, default=lambda o: type(o).__name__)
            cell = html.escape(text)
            if len(text) > 100:
                pretty = json.dumps(
                    value, sort_keys=True, indent=1, default=lambda o: type(o).__name__
                )
                cell = f"<details><summary>{html.escape(text[:80])}...</summary>"
                cell += f"<pre>{html.escape(pretty)}</pre></details>"
        rows.append(f"<tr><th>{html.escape(str(key))}</th><td>{cell}</td></tr>")
    return '<table class="summary">\n' + "\n".join(rows) + "\n</table>"


def _legend(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    if not groups:
        return '<p class="note">No region groups.</p>'
    items = []
    for g, group in enumerate(groups):
        names = list(group[0]) if group else []
        more = f", ... ({len(names) - 6} more)" if len(names) > 6 else ""
        first = html.escape(", ".join(names[:6]) + more)
        swatch = f'<span class="swatch" style="background: {group_colour(g)}"></span>'
        size = f"{plural(len(group), 'region')} x {plural(len(group[0]) if group else 0, 'node')}"
        items.append(f"<li>{swatch}group {g} (tag g{g}): {size}; region 0: {first}</li>")
    return '<ul class="legend">\n' + "\n".join(items) + "\n</ul>"


def figure(svg: str, name: str) -> str:
    return f'<div class="figure" data-drawing="{html.escape(name)}">\n{svg}</div>'
