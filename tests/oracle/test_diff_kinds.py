"""What a divergence is called and when a model agrees (spec chapter 08, DIF-22 to DIF-26): a
split that raises refuses, each component reports only its kinds, free choices alone agree and
say why, and split partitions in another valid order show only with `--strict-order`. The
plug-ins are `tests/support/plugins.py`."""

from __future__ import annotations

import json
import operator
import re
from pathlib import Path

import pytest
import torch
import torch.fx

from checker.cli import main
from checker.io.model_file import Model, load_model_file, model_from_source
from checker.oracle.campaign.randmodels import random_model
from checker.oracle.compare.divergence import KINDS, Blame, Divergence, Kind
from checker.oracle.compare.graph_level import split_case
from checker.oracle.diff.driver import run_diff
from checker.oracle.diff.report import DiffReport, GraphDiff, render_text
from checker.oracle.sides.cases import SplitCase
from checker.oracle.sides.sides import Component, make_sides
from tests.support.corpus import CORPUS_DIR, corpus_files
from tests.support.paths import SPECS

pytestmark = pytest.mark.filterwarnings("ignore")

PLUGINS = "tests.support.plugins"
EXAMPLE = "checker.oracle.plugins.example:Example"
TWO_SOURCE = """import torch


def model(x, y):
    a = torch.sin(x)
    b = torch.cos(y)
    c = a * b
    d = a + b
    return c - d, d


example_inputs = (torch.randn(4, 8), torch.randn(4, 8))
"""


def _two() -> list[Model]:
    """`thirds` gives submod_0 two inputs and two outputs; `each` has two independent roots,
    which torch's LIFO order calls last-first."""
    return [model_from_source("two", TWO_SOURCE)]


def _found(report: DiffReport) -> list[Divergence]:
    return [d for g in report.graphs for d in g.divergences]


def _grad_graph() -> torch.fx.GraphModule:
    """x -> grad off, sin, grad on, add: partition ids that decrease across a grad-mode switch
    (policy `reverse`) are refused by both the reference and torch."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.call_function(torch._C._set_grad_enabled, (False,))
    a = g.call_function(torch.sin, (x,))
    g.call_function(torch._C._set_grad_enabled, (True,))
    g.output((g.call_function(operator.add, (a, 1)),))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.spec("DIF-22")
def test_dif22_a_plug_in_refusing_a_valid_split_is_blamed_for_a_refusal() -> None:
    """Raising refuses, as the contract says: never a `crash`; the reference's split is right,
    so the plug-in refused a case that can be split, and is blamed, with its traceback."""
    report = run_diff(_two(), f"{PLUGINS}:Refuses", "split")
    found = _found(report)
    assert len(found) == len(make_sides(f"{PLUGINS}:Refuses", "split").split_cases)
    for d in found:
        assert (d.kind, d.blame) == (Kind.REFUSAL, Blame.OTHER)
        assert d.detail == (
            f"{PLUGINS}:Refuses refused a case the reference splits correctly: "
            "ValueError: this splitter splits nothing"
        )
        assert "splits nothing" in d.traceback
    assert report.fails


@pytest.mark.spec("DIF-22")
@pytest.mark.parametrize("against", ["torch", f"{PLUGINS}:Refuses", f"{PLUGINS}:Scales"])
def test_dif22_both_refusing_agree_and_a_wrong_split_is_blamed_over_a_refusal(
    against: str,
) -> None:
    """The reference refuses decreasing ids across a grad-mode switch: torch and the refusing
    plug-in refuse too and agree; a splitter whose output is wrong is blamed, the refusal
    stands. `Scales` edits the graph it is given: each side splits its own copy."""
    sides = make_sides(against, "split")
    found = split_case(_grad_graph(), (torch.randn(3),), sides, SplitCase("reverse", False))
    if against != f"{PLUGINS}:Scales":
        assert found == []
        return
    (d,) = found
    assert (d.kind, d.blame) == (Kind.REFUSAL, Blame.OTHER), d.detail
    assert d.detail.startswith("reference refused (FxOracleError: ")
    assert "; tests.support.plugins:Scales: example inputs: numbers differ" in d.detail


def _spec_kinds() -> dict[str, set[str]]:
    """DIF-23's table of kinds per component, as the spec writes it."""
    text = (SPECS / "08-oracle.md").read_text()
    section = text.split("### DIF-23 ", 1)[1].split("### ", 1)[0]
    rows = re.findall(r"^\| (tracker|dedup|sort|split) \| ([a-z, -]+) \|$", section, re.M)
    return {component: set(kinds.split(", ")) for component, kinds in rows}


@pytest.mark.spec("DIF-23")
def test_dif23_the_table_is_the_code_s() -> None:
    code = {str(c): {str(k) for k in KINDS[c]} for c in Component}
    assert _spec_kinds() == code
    with pytest.raises(AssertionError, match="DIF-23: split cannot diverge by order"):
        Divergence(Component.SPLIT, Kind.ORDER, Blame.NEITHER, "", "x")


def _kinds_seen(report: DiffReport) -> set[tuple[Component | None, Kind]]:
    found = _found(report)
    assert not [d.detail for d in found if d.kind is Kind.ORACLE_ERROR]
    return {(d.component, d.kind) for d in found}


@pytest.mark.spec("DIF-23")
def test_dif23_every_kind_produced_is_in_the_table() -> None:
    """The corpus against torch (every component), the planted plug-ins on the corpus and on
    the random models that catch them, and the test splitters: every kind each component
    produced is in its row (a kind outside would be an oracle-error: `Divergence` asserts)."""
    corpus = [load_model_file(p) for p in corpus_files()]
    seen = _kinds_seen(run_diff(corpus, "torch", "all"))
    seen |= _kinds_seen(run_diff(corpus, "checker.oracle.plugins.planted:Planted", "all"))
    for planted, index in (("IgnoresViews", 0), ("SkipsAliasing", 1), ("OutputsPerRegion", 2)):
        model = [random_model(1, index)]  # the families that show them (DIF-6)
        seen |= _kinds_seen(run_diff(model, f"checker.oracle.plugins.planted:{planted}", "all"))
    for splitter in ("Refuses", "WrongGetitem", "WrongSignature", "PermutesSignature"):
        seen |= _kinds_seen(run_diff(_two(), f"{PLUGINS}:{splitter}", "split", strict_order=True))
    assert all(kind in KINDS[component] for component, kind in seen), seen
    produced = {c: {k for cc, k in seen if cc is c} for c in Component}
    assert produced[Component.SPLIT] >= {Kind.GRAPH, Kind.REFUSAL}
    assert produced[Component.DEDUP] >= {Kind.GRAPH, Kind.ORDER, Kind.CRASH}
    assert produced[Component.TRACKER] >= {Kind.REGIONS} and Kind.ORDER in produced[Component.SORT]


@pytest.mark.spec("DIF-23")
@pytest.mark.parametrize(
    ("splitter", "blame"),
    [("WrongGetitem", Blame.OTHER), ("WrongSignature", Blame.OTHER),
     ("PermutesSignature", Blame.NEITHER)],
)  # fmt: skip
def test_dif23_a_wrong_getitem_and_a_permuted_signature_are_graph_divergences(
    splitter: str, blame: Blame
) -> None:
    """A getitem taking output 1 instead of 0 was reported as `order`: it is `graph`, blamed
    on the plug-in; so is a permuted signature, wrong alone, a free choice (shown with
    `--strict-order`) when its calls pass the operands permuted too."""
    report = run_diff(_two(), f"{PLUGINS}:{splitter}", "split", strict_order=True)
    thirds = [d for d in _found(report) if d.case.startswith("thirds")]
    assert thirds and {(d.kind, d.blame) for d in thirds} == {(Kind.GRAPH, blame)}


@pytest.mark.spec("DIF-23", "DIF-3")
def test_dif23_order_only_where_only_the_order_differs() -> None:
    """SRT-10 with autocast: torch's dedup graph holds the reference's nodes in another order
    (a call sorted out of its autocast block): `order`, blamed on torch."""
    report = run_diff([load_model_file(CORPUS_DIR / "own_autocast_back_to_back.py")], "torch",
                      "dedup")  # fmt: skip
    assert [(d.kind, d.wrong) for d in _found(report)] == [(Kind.ORDER, "torch")]


def _free(component: Component, kind: Kind, blame: Blame = Blame.NEITHER) -> Divergence:
    return Divergence(component, kind, blame, "x; both correct; y", "mine")


@pytest.mark.spec("DIF-24")
def test_dif24_free_choices_alone_agree() -> None:
    free = (_free(Component.DEDUP, Kind.GRAPH), *[_free(Component.SORT, Kind.ORDER)] * 3)
    agreeing = GraphDiff("m.py", free)
    report = DiffReport("mine", (Component.DEDUP, Component.SORT), (), (agreeing,))
    assert agreeing.agree and report.agree and not report.fails
    text = render_text(report)
    assert "  m.py: agree (4 free choices: dedup graph, sort order x3)\n" in text
    assert "    sort order: wrong=neither: x; both correct; y\n" in text
    assert text.endswith("  agree: true, fails: false\n")
    assert report.to_json()["agree"] is True
    for spoiler in (Blame.UNKNOWN, Blame.OTHER):
        other = GraphDiff("n.py", (*free, _free(Component.DEDUP, Kind.GRAPH, spoiler)))
        assert not other.agree and other.verdict() == "DIVERGE"
        summary = DiffReport("mine", (), (), (agreeing, other)).to_json()["summary"]
        assert isinstance(summary, dict) and summary["agree"] == 1


@pytest.mark.spec("DIF-24")
def test_dif24_the_example_plug_in_agrees_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """random_0_2: the example sorts in another valid order: listed free choices, `agree:
    true` in the text and the JSON, exit 0."""
    out = tmp_path / "r.json"
    argv = ["diff", "--random", "3", "--against", EXAMPLE, "--json", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "DIVERGE" not in text and "free choice" in text, text
    assert text.endswith("  agree: true, fails: false\n")
    report = json.loads(out.read_text())
    assert report["agree"] is True and report["summary"]["by_wrong"] == {
        "neither": len(re.findall("wrong=neither", text))
    }


REASON = re.compile(r"; both correct; (.+)$")


@pytest.mark.spec("DIF-25")
def test_dif25_every_free_choice_says_why() -> None:
    """The example against the reference on random models: every `neither` line ends with a
    reason, per component what DIF-25's table promises."""
    found = _found(run_diff([], EXAMPLE, "all", random=20, seed=0))  # random_0_19: dedup
    free = [d for d in found if d.blame is Blame.NEITHER]
    assert {d.component for d in free} == {Component.DEDUP, Component.SORT}
    for d in free:
        why = REASON.search(d.detail)
        assert why is not None, d.detail
        if d.component is Component.DEDUP:
            assert why[1].startswith("both compute the original; "), d.detail
            assert re.search(r"outlined (no group|\d+ groups? \(\d+ calls\))|valid order", why[1])
        else:
            assert why[1].startswith("both orders are valid"), d.detail
            assert re.match(r"orders differ at position \d+: reference \w+, ", d.detail)


@pytest.mark.spec("DIF-25")
def test_dif25_fewer_groups_name_the_groups_missing() -> None:
    report = run_diff([load_model_file(CORPUS_DIR / "t01_single_region_group.py")],
                      f"{PLUGINS}:FewerGroups", "tracker")  # fmt: skip
    (d,) = _found(report)
    assert (d.kind, d.blame) == (Kind.REGIONS, Blame.NEITHER)
    mine = f"{PLUGINS}:FewerGroups"
    assert d.detail == (
        f"reference [3x5], {mine} []; both correct; {mine} found fewer groups: it lacks 3x5 at "
        "x0/x0_1/x0_2; both groupings are valid: no overlap, equal nodes at each position"
    )


@pytest.mark.spec("DIF-26", "DIF-3")
def test_dif26_partitions_in_another_order_are_shown_only_with_strict_order() -> None:
    """`each` makes sin and cos independent partitions: torch's LIFO order calls cos first,
    the plug-in sin. The same meaning: no divergence; with `--strict-order`, a free choice
    with its reason."""
    against = f"{PLUGINS}:OtherOrder"
    assert _found(run_diff(_two(), against, "split")) == []
    (d,) = _found(run_diff(_two(), against, "split", strict_order=True))
    assert (d.kind, d.blame) == (Kind.GRAPH, Blame.NEITHER)
    assert d.case == "each, keep_original_order=False"
    assert d.detail.endswith(
        f"; both correct; both compute the original; {against} calls the same partitions in "
        "another valid order (the reference: torch's, the last ready partition first, SPL-7)"
    )
