"""`fxoracle verify --html`: a page a person reads (spec chapter 06, CHK-10): the verdict as a
worded badge first, one row per obligation (violated and unknown first, open), each group's
fate, the graph before and after, timings; no repr, identical between runs but for timings.
A planted broken transformation gives the violated page (checker/tools/render/); the
screenshot of it is in `test_html_report.py`."""

from __future__ import annotations

import dataclasses
import html
import operator
import re
from pathlib import Path

import pytest
import torch.fx

from checker.proof.check import check_transformation
from checker.proof.report import ACYCLIC, SHAPES, WELL_FORMED, Report, obligation
from checker.proof.verdict import Holds, Unknown, Violated
from checker.tools.checked_pipeline import Split
from checker.tools.render.html_report import group_colour, verify_page
from checker.tools.render.report_parts import SECTIONS, SPEC, obligations_table
from checker.tools.verify import VerifyReport, load_graph, verify_capture
from reference.torch_version import TORCH

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests" / "corpus" / "d03_multiple_subgraphs.py"
TIMES = re.compile(r'<td class="time">[^<]*</td>')


def verified(name: str = "d03_multiple_subgraphs.py") -> VerifyReport:
    return verify_capture(name, load_graph(MODEL))


def planted(report: VerifyReport) -> VerifyReport:
    """`report` with a bug planted in its deduplicated module (subgraph_0's `x + 1` becomes
    `x - 1`) and the module checked again: a violated report, as a broken pass gives."""
    r = report.result
    sub = r.transformed.get_submodule("subgraph_0")
    assert isinstance(sub, torch.fx.GraphModule)
    node = next(n for n in sub.graph.nodes if n.target is operator.add)
    node.target = operator.sub
    sub.recompile()
    r.transformed.recompile()
    check = check_transformation(r.original, r.transformed, extra_deps=r.dedup.extra_deps)
    return dataclasses.replace(report, result=dataclasses.replace(r, check=check))


@pytest.fixture(scope="module")
def page() -> str:
    return verify_page(verified())


@pytest.fixture(scope="module")
def broken() -> tuple[VerifyReport, str]:
    report = planted(verified("planted.py"))
    return report, verify_page(report)


@pytest.mark.spec("CHK-10")
def test_chk10_the_page_is_identical_between_runs_but_for_timings(page: str) -> None:
    again = verify_page(verified())
    assert len(TIMES.findall(page)) == 5  # capture, expand, dedup, check, total
    assert TIMES.sub("", page) == TIMES.sub("", again)


@pytest.mark.spec("CHK-10")
def test_chk10_no_repr_reaches_the_page(page: str, broken: tuple[VerifyReport, str]) -> None:
    for text in (page, broken[1]):
        for opener in ("{&quot;", "[&quot;", "{&#x27;", "[&#x27;", "{'", "['"):
            assert opener not in text


def test_the_verdict_comes_first_as_a_worded_badge(page: str) -> None:
    assert page.index('class="badge ok">OK</span> every obligation holds') < page.index("Summary")
    for row in ("model</th><td>d03_multiple_subgraphs.py", f"torch</th><td>{TORCH.label}",
                "device</th><td>cpu", "nodes before</th><td>34", "nodes after</th><td>21",
                "region groups</th><td>2", "invoke calls</th><td>5"):  # fmt: skip
        assert row in page
    assert "<th>subgraph_0</th><td>8 nodes</td>" in page  # a mapping is a table


def test_the_device_is_the_reports() -> None:
    """The summary names the device the report was captured on (FIL-8), not a guess."""
    report = dataclasses.replace(verified(), device="cuda:0")
    assert "device</th><td>cuda:0" in verify_page(report)


def test_each_obligation_is_a_row_linking_to_its_section(page: str) -> None:
    rows = re.findall(r'<tr class="(\w+)" data-obligation="(CHK-\d+)"><td><a href="([^"]+)"', page)
    assert [(v, i) for v, i, _ in rows] == [("holds", i) for i in SECTIONS]
    assert all(href == f"{SPEC}#{SECTIONS[i]}" for _, i, href in rows)


def test_spec_sections_are_the_spec_headings() -> None:
    """Each link's anchor is GitHub's anchor of that obligation's heading in the spec."""
    headings = re.findall(r"^### ((CHK-\d+) .*)$", (ROOT / SPEC).read_text(), re.MULTILINE)
    anchors = {i: re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h, i in headings}
    assert {i: anchors[i] for i in SECTIONS} == SECTIONS


def test_violated_rows_come_first_open_with_the_witness(broken: tuple[VerifyReport, str]) -> None:
    report, text = broken
    assert not report.ok
    violated = [o for o in report.result.check.obligations if isinstance(o.verdict, Violated)]
    assert {o.id for o in violated} >= {"CHK-3", "CHK-6"}
    rows = re.findall(r'<tr class="(\w+)" data-obligation', text)
    assert rows[: len(violated)] == ["violated"] * len(violated)
    assert "holds" not in rows[: len(violated)]
    assert text.index('class="badge not-ok">NOT OK') < text.index("Summary")
    for o in violated:
        assert isinstance(o.verdict, Violated)
        witness = html.escape(o.verdict.witness)  # in full
        assert f"<details open><summary>witness</summary><pre>{witness}</pre>" in text


def test_groups_show_each_region_fate_and_the_refused_steps(page: str) -> None:
    assert page.count('<section class="group"') == 2
    assert "by invoke_subgraph_4 (subgraph_1)" in page
    assert page.count('class="badge replaced">REPLACED') == 5
    assert "<b>EXP-7</b>: the candidate is shared" in page  # a refused step, its id in bold
    assert "x0 is also region 0&#x27;s candidate" in page  # and what differed


def test_regions_share_their_colour_before_and_after(page: str) -> None:
    before = page.split('data-drawing="original"')[1].split("</svg>")[0]
    after = page.split('data-drawing="deduplicated"')[1].split("</svg>")[0]
    for g in range(2):
        assert f"fill: {group_colour(g)}" in before
        assert f"fill: {group_colour(g)}" in after  # the calls that replaced the regions
    assert page.index('data-drawing="deduplicated"') < page.index("<h2>Subgraphs</h2>")


def test_rows_go_violated_unknown_holds_and_a_model_is_a_table() -> None:
    shapes = Violated("call_1 operand 0: s0 != 3", (("s0", 4),))
    report = Report((obligation(WELL_FORMED, Holds("on the CPU")),
                     obligation(ACYCLIC, Unknown("solver timeout after 2000 ms")),
                     obligation(SHAPES, shapes)))  # fmt: skip
    table = obligations_table(report)
    rows = re.findall(r'<tr class="(\w+)" data-obligation="(CHK-\d+)"', table)
    assert rows == [("violated", "CHK-5"), ("unknown", "CHK-2"), ("holds", "CHK-1")]
    assert "<pre>call_1 operand 0: s0 != 3</pre>" in table
    assert '<table class="kv"><tr><th>s0</th><td>4</td></tr></table>' in table
    assert "<details open><summary>reason</summary><pre>solver timeout after 2000 ms</pre>" in table
    assert "<td>on the CPU</td>" in table
    assert 'class="badge unknown">UNKNOWN</span>' in table


def test_a_refused_region_shows_its_id_and_what_differed() -> None:
    """`input_mutation.py`'s regions write their inputs (RPL-7): their rows are open, each with
    the refusal's id in bold and the node that writes."""
    report = verify_capture(
        "input_mutation.py", load_graph(ROOT / "tests/golden/input_mutation.py")
    )
    text = verify_page(report)
    assert '<details class="fates" open><summary>regions: 0 replaced, 2 refused' in text
    row = (
        '<tr><td>region 0</td><td><span class="badge refused">REFUSED</span></td><td><b>RPL-7'
        "</b>: the region writes one of its external inputs, or an alias of one (add_ writes x0)"
    )
    assert row in text


def test_a_split_has_its_partitions_listed_and_its_own_obligation_rows() -> None:
    split = Split.parse("per-region")
    report = verify_capture("d03_multiple_subgraphs.py", load_graph(MODEL), split)
    assert report.result.split is not None
    text = verify_page(report)
    names = "".join(f"<li>{n}</li>" for n in report.result.split.partitions)
    assert f'<h2>Split (per-region)</h2>\n<div>partitions: <ul class="flat">{names}</ul>' in text
    assert text.count('<table class="obligations">') == 2
    assert "split</th><td>per-region: 6 partitions" in text
