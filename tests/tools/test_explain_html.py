"""`fxoracle explain --html`: the regions drawn growing, step by step (chapter 02, EXP-10)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch

from checker.cli import main
from checker.tools.explain import lesson_of
from checker.tools.render.explain_html import MAX_FRAMES, render_explain_html
from checker.tools.render.html_report import group_colour
from reference.dynamo.capture import capture
from reference.graph_copy import copy_graph_module


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def _block(x: torch.Tensor) -> torch.Tensor:
    return torch.cos(torch.sin(x) * 2) + x


def _model(x: torch.Tensor) -> torch.Tensor:
    for _ in range(3):
        x = _block(x)
    return x


def test_exp10_frames_follow_accepted_steps() -> None:
    """EXP-10: one frame for the roots and one per accepted step (up to MAX_FRAMES)."""
    c = capture(_model, (torch.rand(4),))
    original = copy_graph_module(c.gm).gm
    lesson = lesson_of("blocks", c)
    page = render_explain_html(lesson, original.graph)
    parser = _Tags()
    parser.feed(page)
    accepted = sum(s.joined for g in lesson.groups for s in g.steps)
    assert 0 < accepted <= MAX_FRAMES
    assert parser.tags.count("svg") == len(lesson.groups) + accepted
    assert group_colour(0) in page and "(g0 r1)" in page
    assert "refused" in page or accepted == sum(len(g.steps) for g in lesson.groups)


def test_explain_html_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lesson.html"
    assert main(["explain", "--group", "0", "--html", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "Group 0" in page
    assert "-> all join" in capsys.readouterr().out


def test_exp10_one_heading_refusals_by_region_and_figures_as_tall_as_one_region() -> None:
    """One h1; a refusal names the region that refused it, as the text does; the regions are
    drawn side by side, so a frame is as tall as one region, not as all of them stacked."""
    c = capture(_model, (torch.rand(4),))
    original = copy_graph_module(c.gm).gm
    lesson = lesson_of("blocks", c)
    page = render_explain_html(lesson, original.graph)
    parser = _Tags()
    parser.feed(page)
    assert parser.tags.count("h1") == 1
    refusals = [s for g in lesson.groups for s in g.steps if not s.joined]
    assert all(f"refused by region {s.refused_region}: {s.reason}" in page for s in refusals)
    group = lesson.groups[0]
    heights = [float(h) for h in re.findall(r'<svg [^>]*height="([0-9.]+)pt"', page)]
    rows = [h / (0.55 * 72) for h in heights]  # drawing.svg_of: 0.55 inch a row
    assert len(group.regions) == 3 and max(rows) <= 2 * len(group.regions[0]), rows


def test_exp10_labels_are_kept_whole_on_every_box() -> None:
    """A long parameter name is wrapped, never cut: two names that differ in the middle (the
    block index) stay told apart, and every character of every label is on the box."""
    from checker.tools.render.drawing import node_box

    g = torch.fx.Graph()
    names = ["l_self_modules_blocks_modules_0_modules_norm2_parameters_weight_",
             "l_self_modules_blocks_modules_11_modules_norm2_parameters_weight_"]  # fmt: skip
    labels = [node_box(g.placeholder(n), None).label.split("\ninput")[0] for n in names]
    assert [label.replace("\n", "") for label in labels] == [
        "l_self.blocks.0.norm2.weight_",
        "l_self.blocks.11.norm2.weight_",
    ]
    assert all(len(line) <= 26 for label in labels for line in label.splitlines())
    very = "l_self_model_decoder_layers_11_encoder_attn_k_proj_parametrizations_weight_original0_"
    label = node_box(g.placeholder(very), None).label.split("\ninput")[0]
    assert len(label.splitlines()) == 3 and label.startswith("…")
    assert label.replace("\n", "") == "…" + very[-77:]
