"""Tests of `fxoracle bench --size` (CHK-21): its counting on small known files, the tables
failing loudly, and the fields of its JSON. The limits are not asserted: they are what issue 33's
acceptance measures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.bench.lines import code_lines, definitions, file_lines
from checker.bench.reach import function_of, reached
from checker.bench.size import Concept, measure_lines
from checker.cli import main
from reference.errors import FxOracleError

KNOWN = '''"""A module docstring,
over two lines."""

import os  # a comment


# a comment line
def f(x: int) -> int:
    """f's docstring."""
    y = (x +
         1)

    return y


class C:
    """C's docstring."""

    k = 1

    def m(self) -> str:
        return os.sep
'''
# code lines: 4 (import), 8 (def f), 10 and 11 (one statement), 13, 16 (class), 19, 21, 22


def test_chk21_code_lines_of_a_known_file(tmp_path: Path) -> None:
    assert sorted(code_lines(KNOWN)) == [4, 8, 10, 11, 13, 16, 19, 21, 22]
    path = tmp_path / "known.py"
    path.write_text(KNOWN)
    assert file_lines(path) == 9
    assert definitions(path, ["f", "C"]) == {"f": 4, "C": 4}
    assert definitions(path, ["C", "C.m"]) == {"C": 2, "C.m": 2}


def test_chk21_missing_file_or_definition_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "known.py"
    path.write_text(KNOWN)
    with pytest.raises(FxOracleError, match="defines no g"):
        definitions(path, ["f", "g"])
    with pytest.raises(FxOracleError, match="cannot read"):
        file_lines(tmp_path / "moved.py")


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a two-file concept, a feature torch lacks, one shared file, and a
    torch with the concept's definitions."""
    for rel, text in [("reference/a/x.py", KNOWN), ("reference/a/lack.py", "x = 1\ny = 2\n"),
                      ("reference/shared.py", "z = 3\n"), ("torch/t.py", KNOWN)]:  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path, tmp_path / "torch"


def test_chk21_concepts_lacks_and_shared(tmp_path: Path) -> None:
    repo, torch_root = _tree(tmp_path)
    concept = Concept("a", ("reference/a/",), "t.py", ("f",))
    sizes = measure_lines(repo, torch_root, [concept], [("lack", ("reference/a/lack.py",))])
    (row,) = sizes.rows
    assert (row.reference.parts, row.torch.parts, row.ratio) == (
        (("reference/a/x.py", 9),),
        (("f", 4),),
        9 / 4,
    )
    assert [(n, c.total) for n, c in sizes.lacks] == [("lack", 2)]
    assert sizes.shared.parts == (("reference/shared.py", 1),)
    moved = [("lack", ("reference/a/gone.py",))]
    with pytest.raises(FxOracleError, match=r"reference/a/gone\.py: no such file"):
        measure_lines(repo, torch_root, [concept], moved)


def test_chk21_comprehensions_count_as_their_function() -> None:
    assert function_of("A.f.<locals>.<listcomp>.<listcomp>") == "A.f"
    assert function_of("f.<locals>.<lambda>") == "f"
    assert function_of("f.<locals>.g.<locals>.<genexpr>") == "f.<locals>.g"
    assert function_of("<lambda>") == "<lambda>"
    here = Path(__file__).parent  # the lambda and its list comprehension are this test's
    test = "test_chk21_comprehensions_count_as_their_function"
    assert reached(lambda: [x for x in code_lines("a = [i for i in b]\n")], here)[0] == {
        ("test_size.py", test)
    }
    assert reached(lambda: function_of("f"), Path(function_of.__code__.co_filename).parent)[0] == {
        ("reach.py", "function_of")
    }


SIDES = {  # a helper module, a module of what torch lacks, and an entry point calling both
    "chk21_helpers.py": "def shared():\n    return 1\n\n\ndef only_apart():\n    return 2\n",
    "chk21_lack.py": "from chk21_helpers import only_apart, shared\n\n\ndef go():\n"
    "    return only_apart() + shared()\n",
    "chk21_entry.py": "from chk21_helpers import shared\nfrom chk21_lack import go\n\n\n"
    "def run():\n    return shared() + go()\n",
}


def test_chk21_what_torch_lacks_is_told_apart_by_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper only a module of what torch lacks calls counts with it; one that the rest calls
    too counts as the rest; the module's own functions count with it."""
    for name, text in SIDES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    run = __import__("chk21_entry").run
    every, rest = reached(run, tmp_path, apart=("chk21_lack.py",))
    helpers = {("chk21_helpers.py", "shared"), ("chk21_helpers.py", "only_apart")}
    assert every == {("chk21_entry.py", "run"), ("chk21_lack.py", "go"), *helpers}
    assert rest == {("chk21_entry.py", "run"), ("chk21_helpers.py", "shared")}
    assert reached(run, tmp_path)[1] == every  # nothing apart: every function is the rest


@pytest.mark.spec("CHK-21")
def test_chk21_bench_size_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "size.json"
    assert main(["bench", "--size", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "deduplicate reaches <= 60 functions" in text and "split_module" in text
    data = json.loads(out.read_text())
    assert next(iter(data)) == "$fxoracle" and data["$fxoracle"] == "bench"  # FIL-18
    assert main(["bench", "--size", "--json", str(out)]) == 0  # its own report is replaced
    reach = data["reach"]
    assert [r["name"] for r in reach["runs"]] == ["track_graph", "deduplicate",
                                                   "track_graph + deduplicate"]  # fmt: skip
    assert isinstance(reach["fast_false_given_to"], list)
    dedup = reach["runs"][1]
    assert dedup["functions"] == sum(map(len, dedup["by_file"].values())) > 0
    assert dedup["files"] == len(dedup["by_file"])
    assert "pipeline.py" in dedup["by_file"] and reach["verdict"] in ("PASS", "FAIL")
    apart = reach["deduplicate_apart"]
    rest = apart["rest"]
    assert rest["functions"] == sum(map(len, rest["by_file"].values())) > 0
    assert apart["lacks"]["functions"] + rest["functions"] == dedup["functions"]
    assert "effects/alias_db.py" not in rest["by_file"]  # a module of what torch lacks
    lines = data["lines"]
    assert [c["concept"] for c in lines["concepts"]] == [
        "key and tracker",
        "expansion",
        "outlining",
        "stable sort and deps",
        "split_module",
    ]
    for c in lines["concepts"]:
        assert c["reference"] == sum(c["reference_files"].values()) > 0
        assert c["torch"] == sum(c["torch_definitions"].values()) > 0
        assert c["ratio"] == c["reference"] / c["torch"] and c["verdict"] in ("PASS", "FAIL")
    assert {entry["feature"] for entry in lines["lacks"]} >= {"alias DB and node effects"}
    assert lines["shared"]["lines"] == sum(lines["shared"]["files"].values())
