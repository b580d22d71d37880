"""One output-path rule for every path fxoracle writes, and one writer per campaign file (spec
chapter 10, FIL-9, FIL-13): paths resolved once, before any user code runs; no output is an
input or another output of the run, whatever links lead to it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from checker.cli import main
from checker.io.locks import exclusive
from checker.io.reports import write_atomically
from tests.support.errors import one_line_error
from tests.support.models import marked_model

pytestmark = pytest.mark.filterwarnings("ignore")

PLUGIN = "class Mine:\n    def split(self, gm, callback, keep, affix):\n        return gm\n"


def _model(tmp_path: Path, name: str = "m.py") -> tuple[Path, Path]:
    return marked_model(tmp_path, name)


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], expected: str) -> None:
    assert main(argv) == 2
    assert expected in one_line_error(capsys)


@pytest.mark.spec("FIL-9")
def test_fil9_a_path_through_proc_self_cwd_is_the_file_it_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/proc/self/cwd/m.py` is m.py, an input: refused before the model loads."""
    monkeypatch.chdir(tmp_path)
    path, marker = _model(tmp_path)
    source = path.read_text()
    _refused(["verify", "m.py", "--json", "/proc/self/cwd/m.py"], capsys, "is an input")
    assert not marker.exists() and path.read_text() == source


@pytest.mark.spec("FIL-9")
def test_fil9_dev_stdin_redirected_from_the_model_is_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, marker = _model(tmp_path)
    source = path.read_text()
    with _stdin_from(path):
        _refused(["verify", str(path), "--json", "/dev/stdin"], capsys, "is an input")
    assert not marker.exists() and path.read_text() == source


@contextmanager
def _stdin_from(path: Path) -> Iterator[None]:
    saved = os.dup(0)
    fd = os.open(path, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


@pytest.mark.spec("FIL-9")
def test_fil9_two_outputs_one_file_through_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _model(tmp_path)
    argv = ["verify", "m.py", "--json", "/proc/self/cwd/a.json", "--html", "a.json"]
    _refused(argv, capsys, "would be one file")


@pytest.mark.spec("FIL-9")
def test_fil9_a_plug_in_source_is_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, marker = _model(tmp_path)
    plugin = tmp_path / "plug.py"
    plugin.write_text(PLUGIN)
    argv = ["diff", str(path), "--against", f"{plugin}:Mine", "--json", str(plugin)]
    _refused(argv, capsys, "is an input")
    assert plugin.read_text() == PLUGIN and not marker.exists()


@pytest.mark.spec("FIL-9")
def test_fil9_a_plug_in_module_is_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path, _ = _model(tmp_path)
    (tmp_path / "plugmod.py").write_text(PLUGIN)
    argv = ["diff", str(path), "--against", "plugmod:Mine", "--json", "plugmod.py"]
    _refused(argv, capsys, "is an input")
    assert (tmp_path / "plugmod.py").read_text() == PLUGIN


@pytest.mark.spec("FIL-9")
def test_fil9_a_course_answer_is_an_input_through_proc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    answer = tmp_path / "ans.py"
    answer.write_text("x = 1\n")
    argv = ["course", "check", "01.1", "ans.py", "--json", "/proc/self/cwd/ans.py"]
    _refused(argv, capsys, "is an input")
    assert answer.read_text() == "x = 1\n"


@pytest.mark.spec("FIL-9")
def test_fil9_an_input_a_repro_could_be_named_as_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, marker = _model(tmp_path)
    other = tmp_path / "m_dedup_repro.py"
    other.write_text(path.read_text())
    argv = ["diff", str(path), str(other), "--against", "torch", "--repro-dir", str(tmp_path)]
    _refused(argv, capsys, "a repro could be written over")
    assert not marker.exists()


@pytest.mark.spec("FIL-9")
def test_fil9_a_model_that_changes_folder_does_not_move_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)
    path, _ = _model(tmp_path)
    path.write_text(f"import os\nos.chdir({str(elsewhere)!r})\n" + path.read_text())
    assert main(["verify", "m.py", "--json", "r.json"]) == 0
    capsys.readouterr()
    assert json.loads((tmp_path / "r.json").read_text())["ok"] is True
    assert not (elsewhere / "r.json").exists()


@pytest.mark.spec("FIL-9")
def test_fil9_names_near_name_max_write_and_longer_ones_are_refused_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 250-character name is written (its temporary file's name is cut to fit); a name
    over NAME_MAX is one line before the model loads."""
    path, marker = _model(tmp_path)
    long = tmp_path / ("r" * 245 + ".json")
    assert main(["verify", str(path), "--json", str(long)]) == 0
    capsys.readouterr()
    assert json.loads(long.read_text())["ok"] is True
    marker.unlink()
    _refused(["verify", str(path), "--json", str(tmp_path / ("r" * 300))], capsys, "too long")
    assert not marker.exists()


@pytest.mark.spec("FIL-9")
def test_fil9_a_leftover_with_a_huge_number_is_not_ours(tmp_path: Path) -> None:
    odd = tmp_path / f".r.json.{'9' * 40}.x.fxoracle-tmp"
    odd.write_text("someone's")
    write_atomically(tmp_path / "r.json", "{}\n")
    assert (tmp_path / "r.json").read_text() == "{}\n" and odd.exists()


@pytest.mark.spec("FIL-13")
def test_fil13_a_second_campaign_on_one_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.json"
    with exclusive(out, "fxoracle fuzz"):
        _refused(["fuzz", "--out", str(out), "--max-models", "1", "--workers", "1"], capsys,
                 "is writing it")  # fmt: skip
        assert not out.exists()
    assert not list(tmp_path.iterdir()), "the lock file is removed with the lock"


@pytest.mark.spec("FIL-13")
@pytest.mark.parametrize("models", ["1e999", "-3", "true"])
def test_fil13_a_campaign_file_with_a_bad_count_is_refused(
    models: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.json"
    rest = '"diverging_models": 0, "by_wrong": {}, "elapsed_s": 1.0, "findings": []}'
    mark = '{\n  "$fxoracle": "fuzz",\n'  # fxoracle's own (FIL-18): its counts are read
    text = f'{mark}"seed": 0, "against": "torch", "torch": "2.13.0", "models": {models}, {rest}'

    out.write_text(text)
    _refused(["fuzz", "--out", str(out), "--max-models", "1", "--workers", "1"], capsys,
             "holds no fxoracle campaign")  # fmt: skip
    assert out.read_text() == text
