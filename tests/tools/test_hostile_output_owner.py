"""fxoracle replaces only a file it wrote (spec chapter 10, FIL-18): an existing, non-empty
output that does not begin as an fxoracle output of the same kind is refused before any work,
kept byte for byte; an empty file and a report of an earlier run are replaced. Every path here
is under `tmp_path`: never a real system file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.cli import main
from checker.io.out_paths import check_folder, check_outputs, head, marked
from checker.io.reports import to_json
from reference.errors import FxOracleError
from tests.support.errors import one_line_error
from tests.support.models import marked_model

pytestmark = pytest.mark.filterwarnings("ignore")

Argv = Callable[[Path, str], list[str]]  # (tmp_path, output path) -> the command line


def _model(tmp: Path) -> str:
    return str(marked_model(tmp, "m.py")[0])


def _answer(tmp: Path) -> str:
    (tmp / "ans.py").write_text("EQUAL_KEYS = []\n")
    return str(tmp / "ans.py")


FUZZ = ["--max-models", "1", "--workers", "1"]
BENCH = ["--sizes", "300", "--repeat", "1", "--campaign-models", "0"]
COMMANDS: dict[str, tuple[str, Argv]] = {
    "verify_json": ("verify", lambda t, o: ["verify", _model(t), "--json", o]),
    "verify_html": ("html", lambda t, o: ["verify", _model(t), "--html", o]),
    "explain_json": ("explain", lambda t, o: ["explain", _model(t), "--json", o]),
    "explain_html": ("html", lambda t, o: ["explain", _model(t), "--html", o]),
    "diff_json": ("diff", lambda t, o: ["diff", _model(t), "--against", "torch", "--json", o]),
    "fuzz_out": ("fuzz", lambda t, o: ["fuzz", "--out", o, *FUZZ]),
    "bench_json": ("bench", lambda t, o: ["bench", *BENCH, "--json", o]),
    "course_json": ("course", lambda t, o: ["course", "check", "01.1", _answer(t), "--json", o]),
}
FOREIGN = {
    "text": b"root:x:0:0:root:/root:/bin/bash\n",
    "json": b'{\n  "model": "mine",\n  "ok": true\n}\n',
    "python": b"import os\n\nprint('my own code')\n",
    "other_kind": b'{\n  "$fxoracle": "nothing-fxoracle-writes",\n  "model": "m"\n}\n',
    "html": b"<!DOCTYPE html>\n<html><title>my page</title></html>\n",
}


@pytest.mark.spec("FIL-18")
@pytest.mark.parametrize("what", sorted(FOREIGN))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_fil18_a_file_fxoracle_did_not_write_is_refused_and_kept(
    command: str, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any work (the model never loads), exit 2, one line; the file unchanged."""
    _, argv = COMMANDS[command]
    out = tmp_path / "out.file"
    out.write_bytes(FOREIGN[what])
    assert main(argv(tmp_path, str(out))) == 2
    assert "exists and is not an fxoracle" in one_line_error(capsys)
    assert out.read_bytes() == FOREIGN[what]
    assert not (tmp_path / "loaded").exists(), "refused before the model was loaded"


@pytest.mark.spec("FIL-18")
@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"bench_json"}))  # minutes: below
def test_fil18_an_empty_file_then_fxoracles_own_report_are_replaced(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`touch r.json`, run, run again with the same path: both runs write the report."""
    kind, argv = COMMANDS[command]
    out = tmp_path / "out.file"
    out.touch()
    assert main(argv(tmp_path, str(out))) in (0, 1)
    first = out.read_bytes()
    assert first.startswith(head(kind)), first[:80]
    (tmp_path / "loaded").unlink(missing_ok=True)
    assert main(argv(tmp_path, str(out))) in (0, 1)
    assert out.read_bytes().startswith(head(kind))
    assert "error" not in capsys.readouterr().err


@pytest.mark.spec("FIL-18")
def test_fil18_bench_replaces_an_empty_file_and_its_own_report(tmp_path: Path) -> None:
    """As `bench --json` writes its report (a run takes minutes here): `check_outputs` takes
    an empty file and bench's own report, and refuses a verify report."""
    out = tmp_path / "bench.json"
    out.touch()
    assert check_outputs([(str(out), "bench")]).files[0] is not None
    out.write_text(json.dumps(marked("bench", {"kind": "transformer"}), indent=2) + "\n")
    assert check_outputs([(str(out), "bench")]).files[0] is not None
    out.write_text(to_json(marked("verify", {"model": "m"})))
    with pytest.raises(FxOracleError, match="not an fxoracle bench report"):
        check_outputs([(str(out), "bench")])


@pytest.mark.spec("FIL-18")
def test_fil18_a_report_of_another_kind_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A verify report fxoracle wrote is not replaced by an explain report."""
    out = tmp_path / "r.json"
    assert main(["verify", _model(tmp_path), "--json", str(out)]) == 0
    written = out.read_bytes()
    (tmp_path / "loaded").unlink()
    assert main(["explain", _model(tmp_path), "--json", str(out)]) == 2
    assert "is not an fxoracle explain report" in one_line_error(capsys)
    assert out.read_bytes() == written and not (tmp_path / "loaded").exists()


@pytest.mark.spec("FIL-18")
@pytest.mark.parametrize("command", ["diff", "fuzz"])
def test_fil18_a_repro_dir_with_a_foreign_repro_name_is_refused(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`m_all_repro.py` in `--repro-dir` that fxoracle did not write: refused, kept."""
    repros = tmp_path / "repros"
    repros.mkdir()
    mine = repros / "m_all_repro.py"
    mine.write_text("print('my script, named like a repro')\n")
    argv = {"diff": ["diff", _model(tmp_path), "--against", "torch"],
            "fuzz": ["fuzz", "--out", str(tmp_path / "f.json"), *FUZZ]}[command]  # fmt: skip
    assert main([*argv, "--repro-dir", str(repros)]) == 2
    assert "m_all_repro.py: exists and is not an fxoracle repro" in one_line_error(capsys)
    assert mine.read_text() == "print('my script, named like a repro')\n"
    assert not (tmp_path / "loaded").exists() and not (tmp_path / "f.json").exists()


@pytest.mark.spec("FIL-18")
def test_fil18_a_repro_dir_with_fxoracles_own_or_empty_repros_is_used(tmp_path: Path) -> None:
    (tmp_path / "a_all_repro.py").write_bytes(head("repro") + b"torch 2.13): ...\n")
    (tmp_path / "b_all_repro.py").touch()
    (tmp_path / "notes.py").write_text("mine, not named like a repro\n")
    assert check_folder(tmp_path) == tmp_path.resolve()
    (tmp_path / "c_all_repro.py").write_text("# fxoracle repro? no\n")
    with pytest.raises(FxOracleError, match=r"c_all_repro\.py: exists and is not an fxoracle"):
        check_folder(tmp_path)


@pytest.mark.spec("FIL-18")
def test_fil18_only_a_prefix_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 64 GiB sparse file whose first bytes are a verify report's is replaced without being
    read whole (reading it would take minutes); one whose first byte differs is refused."""
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.write(head("verify") + b",\n")
        f.truncate(64 << 30)
    assert main(["verify", _model(tmp_path), "--json", str(big)]) == 0
    assert big.stat().st_size < 1 << 20
    (tmp_path / "loaded").unlink()
    with big.open("r+b") as f:
        f.write(b" ")
        f.truncate(64 << 30)
    assert main(["verify", _model(tmp_path), "--json", str(big)]) == 2
    assert "is not an fxoracle verify report" in one_line_error(capsys)
    assert big.stat().st_size == 64 << 30


@pytest.mark.spec("FIL-18")
def test_fil18_a_stream_is_written_as_before(tmp_path: Path) -> None:
    assert main(["verify", _model(tmp_path), "--json", "/dev/null"]) == 0
