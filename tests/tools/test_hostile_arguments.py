"""Hostile arguments and text: values checked as they are parsed, files read as Python reads
them, wrong types refused by the library, text in reports never interpreted (spec chapter 10,
FIL-5, FIL-6, FIL-7)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.fx

from checker import check_transformation
from checker.cli import main
from checker.tools.render.html_report import render_html
from reference import (
    FxOracleError,
    deduplicate,
    find_identical_regions,
    split_module,
    stable_topological_sort,
    track_graph,
)
from tests.support.errors import one_line_error

pytestmark = pytest.mark.filterwarnings("ignore")

MODEL = "import torch\nmodel = torch.sin\nexample_inputs = (torch.ones(2),)\n"
BAD_ARGUMENTS = {
    "minutes_nan": (["fuzz", "--minutes", "nan"], "not a finite positive number"),
    "minutes_inf": (["fuzz", "--minutes", "inf"], "not a finite positive number"),
    "minutes_negative": (["fuzz", "--minutes", "-1"], "not a finite positive number"),
    "max_models_negative": (["fuzz", "--max-models", "-1"], "not a whole number"),
    "workers_zero": (["fuzz", "--workers", "0"], "not at least 1"),
    "seed_arabic_digits": (["fuzz", "--seed", "١٢"], "not a whole number"),
    "random_negative": (["diff", "{model}", "--against", "torch", "--random", "-1"],
                        "not a whole number"),
    "group_negative": (["explain", "{model}", "--group", "-1"], "not a whole number"),
    "split_superscript": (["verify", "{model}", "--split", "every-²"], "every-N"),
    "component_unknown": (["diff", "{model}", "--against", "torch", "--component", "x"],
                          "choose from 'tracker', 'dedup', 'sort', 'split', 'all'"),
    "bench_sizes_zero": (["bench", "--sizes", "0"], "not at least 1"),
    "bench_detect_seed_negative": (["bench", "--detect-seeds", "0", "-1"], "not a whole number"),
}  # fmt: skip


@pytest.mark.spec("FIL-5")
@pytest.mark.parametrize("case", sorted(BAD_ARGUMENTS))
def test_fil5_bad_values_are_refused_as_they_are_parsed(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 and one line; a campaign gets `--max-models 0` so that a value let through ends
    at once instead of running forever."""
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    args, expected = BAD_ARGUMENTS[case]
    argv = [a.format(model=model) for a in args]
    if argv[0] == "fuzz":
        argv += ["--out", str(tmp_path / "f.json")] + (["--max-models", "0"] * ("max" not in case))
    assert main(argv) == 2
    assert expected in one_line_error(capsys)


@pytest.mark.spec("FIL-5")
def test_fil5_dynamic_must_be_a_bool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "model.py"
    path.write_text(MODEL + 'dynamic = "no"\n')
    assert main(["verify", str(path)]) == 2
    assert "`dynamic` must be True or False, not 'no'" in one_line_error(capsys)


SOURCES = {
    "utf8_bom": "\ufeff" + MODEL,
    "latin1_coding": "# -*- coding: latin-1 -*-\n# café\n" + MODEL,
}


@pytest.mark.spec("FIL-5")
@pytest.mark.parametrize("case", sorted(SOURCES))
@pytest.mark.parametrize("command", ["verify", "explain", "diff"])
def test_fil5_model_files_are_read_as_python_reads_them(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A byte-order mark or a `coding:` line: Python runs the file, so fxoracle does."""
    path = tmp_path / "model.py"
    encoding = "latin-1" if "latin" in case else "utf-8"
    path.write_bytes(SOURCES[case].encode(encoding))
    extra = ["--against", "torch"] if command == "diff" else []
    assert main([command, str(path), *extra]) == 0, capsys.readouterr().err
    capsys.readouterr()


def _graph() -> torch.fx.GraphModule:
    return torch.fx.symbolic_trace(lambda x: torch.sin(x) + torch.sin(x))


def _wrong(value: object) -> Any:
    """`value` typed as anything: the argument of the wrong type a caller passes."""
    return value


LIBRARY: dict[str, Callable[[], object]] = {
    "track_graph": lambda: track_graph(_wrong(_graph())),  # a module, not its graph
    "find_identical_regions_graph": lambda: find_identical_regions(_wrong(None), _wrong(None)),
    "find_identical_regions_tracker": lambda: find_identical_regions(_graph().graph, _wrong(3)),
    "deduplicate_gm": lambda: deduplicate(_wrong(_graph().graph), _wrong(None)),
    "deduplicate_tracker": lambda: deduplicate(_graph(), _wrong("tracker")),
    "stable_topological_sort": lambda: stable_topological_sort(_graph().graph, _wrong([1])),
    "split_module_m": lambda: split_module(_wrong(None), None, lambda n: 0),
    "split_module_callback": lambda: split_module(_graph(), None, _wrong(3)),
    "check_transformation": lambda: check_transformation(_graph(), _graph(), _wrong(3)),
}


@pytest.mark.spec("FIL-6")
@pytest.mark.parametrize("case", sorted(LIBRARY))
def test_fil6_library_entry_points_reject_wrong_types(case: str) -> None:
    with pytest.raises(FxOracleError) as caught:
        LIBRARY[case]()
    assert "\n" not in str(caught.value)


@pytest.mark.spec("FIL-7")
def test_fil7_a_file_name_that_is_not_utf8_is_shown_with_a_replacement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Latin-1 byte in the model's file name: the text, the JSON and the HTML report name it
    with U+FFFD, and nothing crashes after the run."""
    folder = os.fsencode(tmp_path)
    path = os.fsdecode(folder + b"/mod\xe8le.py")
    Path(path).write_text(MODEL)
    html = tmp_path / "r.html"
    assert main(["verify", path, "--json", str(tmp_path / "r.json"), "--html", str(html)]) == 0
    assert "mod\ufffdle.py" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["model"] == "mod\ufffdle.py"
    assert "mod\ufffdle.py" in html.read_text(encoding="utf-8")


@pytest.mark.spec("FIL-7")
def test_fil7_html_labels_are_never_read_as_tex() -> None:
    """A submodule named `a$\\frac{x$`: matplotlib would parse `$...$` as TeX and raise."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("a$\\frac{x$", (x,)))
    page = render_html({"model": "m.py"}, g, [], {})
    assert "frac" in page
