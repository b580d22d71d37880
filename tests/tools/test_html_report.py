"""The HTML report: a well-formed, self-contained, deterministic page whose drawings show the
region groups in colour, checked in the markup and, with chromium, in a screenshot
(checker/tools/render/html_report.py)."""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch
import torch.fx

from checker.tools.render.html_report import (
    BOX_LIMIT,
    FULL_LIMIT,
    PALETTE,
    drawing_of,
    group_colour,
    render_html,
    verify_page,
)
from reference.errors import FxOracleError

CHROMIUM = Path("/usr/bin/chromium")
GROUPS = [
    [["mul", "relu", "add"], ["mul_1", "relu_1", "add_1"], ["mul_2", "relu_2", "add_2"]],
    [["sin", "cos"], ["sin_1", "cos_1"]],
]
REPORT = {"model": "blocks.py", "nodes": 14, "region_groups": GROUPS, "ok": True}


def blocks(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    for _ in range(3):
        x = torch.relu(x * 2) + 1
    return x.sin().cos(), x.sin().cos()


def block(a: torch.Tensor) -> torch.Tensor:
    return torch.relu(a * 2) + 1


def head(a: torch.Tensor) -> torch.Tensor:
    return a.sin().cos()


def _page() -> str:
    graph = torch.fx.symbolic_trace(blocks).graph
    subgraphs = {"subgraph_0": torch.fx.symbolic_trace(block).graph,
                 "subgraph_1": torch.fx.symbolic_trace(head).graph}  # fmt: skip
    return render_html(REPORT, graph, GROUPS, subgraphs)


class _Structure(HTMLParser):
    """Checks that every element is closed in order; counts start tags."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.counts: dict[str, int] = {}
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.counts[tag] = self.counts.get(tag, 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:]}")
        else:
            self.open.pop()


def test_page_is_well_formed_with_one_svg_per_drawing() -> None:
    page = _page()
    parser = _Structure()
    parser.feed(page)
    parser.close()
    assert parser.errors == []
    assert parser.open == []
    assert parser.counts["svg"] == 3  # the graph and two subgraphs
    assert parser.counts["table"] == 1
    assert page.startswith("<!DOCTYPE html>")
    for g in range(len(GROUPS)):
        assert f"fill: {group_colour(g)}" in page  # region boxes in the SVG
        assert f"background: {group_colour(g)}" in page  # the legend


def test_page_is_self_contained() -> None:
    page = _page()
    assert re.findall(r"<(script|link|img|iframe|object)\b", page) == []
    assert re.findall(r"url\((?!#)", page) == []  # only references inside the page
    without_namespaces = re.sub(r'xmlns(:\w+)?="[^"]*"', "", page)
    assert "http" not in without_namespaces
    assert "<!--" not in page  # matplotlib's "created with" comment is dropped


def test_page_is_deterministic() -> None:
    assert _page() == _page()


def test_region_nodes_are_filled_and_tagged() -> None:
    graph = torch.fx.symbolic_trace(blocks).graph
    membership = {
        n: (g, r) for g, grp in enumerate(GROUPS) for r, reg in enumerate(grp) for n in reg
    }
    drawing = drawing_of(graph, membership)
    assert [b.key for b in drawing.boxes] == [n.name for n in graph.nodes]
    for box in drawing.boxes:
        if box.key in membership:
            g, r = membership[box.key]
            assert box.fill == group_colour(g)
            assert f"(g{g} r{r})" in box.label
        else:
            assert box.fill not in PALETTE
    assert ("mul", "relu") in drawing.edges
    assert ("add_2", "sin") in drawing.edges


def test_group_colours_are_distinct() -> None:
    colours = [group_colour(g) for g in range(40)]
    assert len(set(colours)) == len(colours)
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours)


def test_unknown_node_names_raise() -> None:
    graph = torch.fx.symbolic_trace(blocks).graph
    with pytest.raises(FxOracleError, match="group 0 region 1 names `nope`"):
        render_html(REPORT, graph, [[["mul"], ["nope"]]], {})


def _chain(length: int, every: int) -> tuple[torch.fx.Graph, list[list[list[str]]]]:
    """A chain of `length` ops; each block of `every` ops after the first is a region."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    names: list[str] = []
    for _ in range(length):
        x = graph.call_function(torch.sin, (x,))
        names.append(x.name)
    graph.output(x)
    regions = [names[i : i + every] for i in range(every, length - every, 2 * every)]
    return graph, [regions]


def test_large_graphs_are_condensed() -> None:
    graph, groups = _chain(10_000, 20)
    page = render_html({"nodes": 10_002}, graph, groups, {})
    assert "10002 nodes: condensed to" in page
    assert f"only the first {BOX_LIMIT} are drawn" in page
    small, small_groups = _chain(FULL_LIMIT + 50, 20)
    membership = {n: (0, r) for r, reg in enumerate(small_groups[0]) for n in reg}
    drawing = drawing_of(small, membership)
    # one box per region, one per run of other nodes between them, one for the tail
    assert len(drawing.boxes) == 2 * len(small_groups[0]) + 1
    assert [b.key for b in drawing.boxes[:3]] == ["run0", "g0r0", "run1"]
    assert drawing.boxes[1].label.startswith("g0 r0: 20 nodes")
    assert drawing.edges[:2] == (("run0", "g0r0"), ("g0r0", "run1"))
    plain = drawing_of(graph, {})  # no regions: runs of at most 1% of the graph, a chain
    assert len(plain.boxes) == 101
    assert plain.boxes[0].label == "100 nodes\nx..sin_98"
    assert plain.edges[0] == ("run0", "run1")


def screenshot_colours(page: str, tmp_path: Path) -> dict[object, int]:
    """Pixels per RGB colour of chromium's 1400x1000 screenshot of `page`."""
    from PIL import Image

    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    shot = tmp_path / "shot.png"
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
               f"--screenshot={shot}", "--window-size=1400,1000", path.as_uri()]  # fmt: skip
    subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert shot.exists(), "chromium wrote no screenshot"
    with Image.open(shot) as image:
        assert image.size == (1400, 1000)
        colours = image.convert("RGB").getcolors(maxcolors=1400 * 1000)
    assert colours is not None
    return {rgb: n for n, rgb in colours}


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (.ci/setup-chromium)")
def test_screenshot_shows_the_group_colours(tmp_path: Path) -> None:
    count = screenshot_colours(_page(), tmp_path)
    for g in range(len(GROUPS)):
        hex_colour = group_colour(g)
        rgb = tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
        # far more than the legend's 12x12 swatch: the region boxes are visible
        assert count.get(rgb, 0) > 1500, f"group {g} colour {hex_colour}: {count.get(rgb, 0)} px"


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (.ci/setup-chromium)")
def test_screenshot_shows_a_violated_obligation_as_a_violated_row(tmp_path: Path) -> None:
    """A planted broken transformation: its violated rows are on the first screen, tinted,
    with their red VIOLATED badges."""
    from tests.tools.test_verify_page import planted, verified

    count = screenshot_colours(verify_page(planted(verified("planted.py"))), tmp_path)
    row, red = (0xFF, 0xEB, 0xE9), (0xCF, 0x22, 0x2E)  # tr.violated td, .badge.violated
    assert count.get(row, 0) > 20_000, f"violated rows: {count.get(row, 0)} px"
    assert count.get(red, 0) > 1_000, f"violated badges: {count.get(red, 0)} px"
