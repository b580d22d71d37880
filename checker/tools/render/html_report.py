"""The HTML report of `fxoracle verify`: one self-contained page a person reads (spec chapter
06, CHK-10). First the verdict as a worded badge, then the summary (model, torch, device, nodes
before and after, groups, calls), one row per obligation (violated and unknown first, their
witness or reason open), each group with the fate of its regions and the refused lock-steps
(what `explain` says, from the same functions), the graph before and after side by side with
each region in its group's colour in both, each subgraph, and the timings per phase.

Lists and mappings are lists and tables, never a repr (`report_parts.value_html`). The drawings
come from `checker.tools.render.drawing` (matplotlib figures inlined as SVG: no script, no
external URL, nothing fetched). Same report, same bytes but for the timings, each in a cell of
class `time`: SVG ids are salted per drawing and the page has no timestamp. An obligation's id
links to its section of `specs/06-checker.md`, relative to the page, so the link resolves on a
page written at the repository's root (`make verify GRAPH=... ARGS="--html report.html"`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

import torch
import torch.fx

from checker.io.out_paths import HTML_HEAD
from checker.io.reports import plural
from checker.proof.report import Report
from checker.tools.explain import group_lessons
from checker.tools.outcomes import region_fates

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
from checker.tools.render.report_parts import (
    group_section,
    obligations_table,
    ok_line,
    swatch,
    timings_table,
    value_html,
)
from checker.tools.verify import VerifyReport, kept_regions
from reference.errors import FxOracleError
from reference.torch_version import TORCH


def verify_page(report: VerifyReport) -> str:
    """The page of one `fxoracle verify` report: the verdict, the summary, one row per
    obligation, each group's fate, the graph before and after side by side, each subgraph, and
    the timings."""
    r = report.result
    groups = [[r.search.names(region) for region in g] for g in kept_regions(r)]
    title = html.escape(report.model)
    parts = [PAGE_HEAD.format(title=title), ok_line(report.ok, _checks(report)),
             "<h2>Summary</h2>", summary_table(summary_of(report)),
             "<h2>Obligations</h2>", obligations_table(r.check)]  # fmt: skip
    if r.split is not None:
        policy = html.escape(str(r.split.policy))
        names = value_html(list(r.split.partitions))
        parts += [f"<h2>Split ({policy})</h2>", f"<div>partitions: {names}</div>"]
        parts.append(obligations_table(r.split.check))
    parts += _groups(report, groups)
    parts += graphs_side_by_side(r.original.graph, r.transformed.graph, groups, _after(report))
    parts += _subgraphs({name: sub.graph for name, sub in r.dedup.subgraphs.items()})
    parts += ["<h2>Timings</h2>", timings_table(_timings(report)), "</body>\n</html>\n"]
    return "\n".join(parts)


def _checks(report: VerifyReport) -> list[Report]:
    split = report.result.split
    return [report.result.check] + ([] if split is None else [split.check])


def summary_of(report: VerifyReport) -> dict[str, object]:
    """The summary table's rows, from the typed report."""
    r = report.result
    subgraphs = {
        name: plural(len(sub.graph.nodes), "node") for name, sub in r.dedup.subgraphs.items()
    }
    rows: dict[str, object] = {
        "model": report.model,
        "torch": TORCH.label,
        "device": report.device,
        "nodes before": report.nodes,
        "nodes after": len(r.transformed.graph.nodes),
        "region groups": len(kept_regions(r)),
        "subgraphs": subgraphs or "none",
        "invoke calls": report.invoke_calls,
    }
    if r.split is not None:
        rows["split"] = f"{r.split.policy}: {plural(len(r.split.partitions), 'partition')}"
    return rows


def _groups(report: VerifyReport, groups: Sequence[Sequence[Sequence[str]]]) -> list[str]:
    r = report.result
    lessons = group_lessons(r.search, r.keys)
    found = [f"<h2>Region groups ({len(groups)})</h2>"]
    if not groups:
        found.append('<p class="note">No region groups: nothing repeats.</p>')
    found += [group_section(g, regions, region_fates(r.dedup, g, len(regions)), lessons[g])
              for g, regions in enumerate(groups)]  # fmt: skip
    return found


def _after(report: VerifyReport) -> Membership:
    """Where each region is in the deduplicated graph: its call when it was replaced, its own
    nodes when it was refused."""
    r = report.result
    found = {x.invoke: (x.group, x.region) for x in r.dedup.replaced}
    names = {n.name for n in r.transformed.graph.nodes}
    for g, group in enumerate(kept_regions(r)):
        for k, region in enumerate(group):
            found.update((n, (g, k)) for n in r.search.names(region) if n in names)
    return found


def _timings(report: VerifyReport) -> dict[str, float]:
    return {"capture_s": report.capture_s} | report.result.timings


def render_html(
    report: Mapping[str, object],
    graph: torch.fx.Graph,
    groups: Sequence[Sequence[Sequence[str]]],
    subgraphs: Mapping[str, torch.fx.Graph],
) -> str:
    """A plain page: `report` as a table, `graph` with region k of group g filled in group
    g's colour and tagged `g<g> r<k>`, then every subgraph. `FxOracleError` when a group names
    a node the graph does not have."""
    membership = _membership(graph, groups)
    title = html.escape(str(report.get("model", "graph")))
    parts = [PAGE_HEAD.format(title=title), "<h2>Summary</h2>", summary_table(report)]
    drawing = drawing_of(graph, membership)
    parts += ["<h2>Graph</h2>", f'<p class="note">{html.escape(drawing.note)}</p>']
    parts += [_legend(groups), figure(svg_of(drawing, "graph"), "graph")]
    parts += _subgraphs(subgraphs)
    parts.append("</body>\n</html>\n")
    return "\n".join(parts)


def graphs_side_by_side(
    before: torch.fx.Graph,
    after: torch.fx.Graph,
    groups: Sequence[Sequence[Sequence[str]]],
    after_membership: Membership,
) -> list[str]:
    """The original graph and the deduplicated one, each region in its group's colour in both
    (in the second, a replaced region is its call)."""
    halves = []
    for title, graph, membership in (("original", before, _membership(before, groups)),
                                     ("deduplicated", after, after_membership)):  # fmt: skip
        drawing = drawing_of(graph, membership)
        svg = svg_of(drawing, title)
        width = _width(svg)
        # each half as wide as its drawing's share; shrunk at most to 70%, then it scrolls
        svg = svg.replace("<svg ", f'<svg style="min-width: {0.7 * width:.0f}pt" ', 1)
        halves.append(f'<div class="half" style="flex-grow: {width:.0f}"><h3>{title}</h3>'
                      f'<p class="note">{html.escape(drawing.note)}</p>'
                      f"{figure(svg, title)}</div>")  # fmt: skip
    return ["<h2>Graph before and after</h2>", _legend(groups),
            '<div class="side-by-side">', *halves, "</div>"]  # fmt: skip


_WIDTH = re.compile(r' width="([0-9.]+)pt"')


def _width(svg: str) -> float:
    """The width in points `svg_of` gave a drawing."""
    found = _WIDTH.search(svg)
    assert found is not None, "svg_of sizes every drawing in points"
    return float(found.group(1))


def _subgraphs(subgraphs: Mapping[str, torch.fx.Graph]) -> list[str]:
    parts = ["<h2>Subgraphs</h2>"] if subgraphs else []
    for name, sub in subgraphs.items():
        drawing = drawing_of(sub, {})
        parts += [
            f"<h3>{html.escape(name)}</h3>",
            f'<p class="note">{html.escape(drawing.note)}</p>',
        ]
        parts.append(figure(svg_of(drawing, f"sub-{name}"), name))
    return parts


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


PAGE_HEAD = (
    HTML_HEAD
    + """ report: {title}</title>
<style>
body {{ font-family: "DejaVu Sans", sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #bbb; padding: 3px 8px; text-align: left; vertical-align: top;
  font-size: 13px; }}
table.kv th, table.kv td {{ border-color: #ddd; padding: 1px 6px; }}
td ul, section ul {{ margin: 0; padding-left: 1.2em; }}
ul.flat {{ display: inline; padding: 0; margin: 0; }}
ul.flat li {{ display: inline; }}
ul.flat li + li::before {{ content: ", "; }}
pre {{ margin: 0; white-space: pre-wrap; max-width: 1100px; }}
.note {{ color: #555; font-size: 13px; }}
.names {{ font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }}
table.obligations td:first-child {{ white-space: nowrap; }}
details.steps, details.fates {{ font-size: 13px; margin: 0.5em 0 1em; }}
details.fates table {{ margin-top: 0.3em; }}
.badge {{ white-space: nowrap; display: inline-block; padding: 1px 7px; border-radius: 4px;
  color: #fff; font-weight: bold; font-size: 12px; letter-spacing: 0.5px; }}
.badge.holds, .badge.ok, .badge.replaced {{ background: #1a7f37; }}
.badge.violated, .badge.not-ok {{ background: #cf222e; }}
.badge.unknown, .badge.refused, .badge.not-replaced {{ background: #9a6700; }}
p.verdict {{ font-size: 16px; }}
p.verdict .badge {{ font-size: 18px; padding: 3px 12px; }}
tr.violated td {{ background: #ffebe9; }}
tr.unknown td {{ background: #fff8c5; }}
ul.legend {{ list-style: none; padding: 0; font-size: 13px; }}
.swatch {{ display: inline-block; width: 12px; height: 12px; border: 1px solid #444;
  margin-right: 6px; vertical-align: middle; }}
.figure {{ overflow-x: auto; }}
.side-by-side {{ display: flex; gap: 1em; align-items: flex-start; }}
.half {{ flex: 1 1 0; min-width: 0; }}
.half .figure svg {{ max-width: 100%; height: auto; }}
</style>
</head>
<body>
<h1>fxoracle report: {title}</h1>"""
)


def summary_table(report: Mapping[str, object]) -> str:
    """One row per key; lists and mappings as lists and tables, never as a repr."""
    rows = [f"<tr><th>{html.escape(str(key))}</th><td>{value_html(value)}</td></tr>"
            for key, value in report.items()]  # fmt: skip
    return '<table class="summary">\n' + "\n".join(rows) + "\n</table>"


def _legend(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    if not groups:
        return '<p class="note">No region groups.</p>'
    items = []
    for g, group in enumerate(groups):
        names = list(group[0]) if group else []
        more = f", ... ({len(names) - 6} more)" if len(names) > 6 else ""
        first = html.escape(", ".join(names[:6]) + more)
        size = f"{plural(len(group), 'region')} x {plural(len(group[0]) if group else 0, 'node')}"
        items.append(f"<li>{swatch(g)}group {g} (tag g{g}): {size}; region 0: {first}</li>")
    return '<ul class="legend">\n' + "\n".join(items) + "\n</ul>"


def figure(svg: str, name: str) -> str:
    return f'<div class="figure" data-drawing="{html.escape(name)}">\n{svg}</div>'
