"""Where `--against` finds a plug-in, how its repros load it, and the first contract's module
(spec chapter 08, DIF-18, DIF-19, DIF-20; chapter 10, FIL-4).

The plug-ins are copies of `checker/oracle/plugins/planted.py` in a temporary folder, named by
their path or, from that folder, by `module:attr`; each repro is then run as its reader would:
from another folder, in a fresh interpreter with only fxoracle importable.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker.cli import main
from checker.io.model_file import load_model_file
from checker.oracle.diff.driver import run_diff
from checker.oracle.sides.loading import Origin, load_impl
from checker.oracle.sides.sides import make_sides
from tests.support.errors import one_line_error
from tests.support.paths import CORPUS, ROOT

pytestmark = pytest.mark.filterwarnings("ignore")

PLANTED = ROOT / "checker" / "oracle" / "plugins" / "planted.py"
GOOD_MODEL = "import torch\nmodel = torch.sin\nexample_inputs = (torch.ones(2),)\n"
OLD_NAMES = (  # what the first contract's checker/impls.py defined (git show fc4858f^:...)
    "DedupOutput", "FindsRegions", "Deduplicates", "Sorts", "Splits", "RegionGroups", "Buckets",
    "Callback", "PARTS", "parts_of", "ReferenceImpl", "TorchImpl", "TorchSimpleImpl", "BUILT_IN",
    "load_impl", "label_of", "SplitCase", "SPLIT_CASES", "HOSTILE_SPLIT_CASES", "partition_ids",
    "region_names", "bucket_names", "first_line",
)  # fmt: skip


@pytest.fixture(autouse=True)
def _imports_undone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`sys.path` and the plug-in modules a test imported are as before after it."""
    monkeypatch.setattr(sys, "path", [*sys.path])
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith(("fxoracle_plugin_", "cwd_")):
            del sys.modules[name]


def _planted(folder: Path, stem: str) -> Path:
    """A copy of the planted plug-ins, `folder/<stem>.py`."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(PLANTED, folder / f"{stem}.py"))


def _run_standalone(repro: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `repro` as its reader would: from `cwd`, a fresh interpreter, only fxoracle (this
    checkout) importable."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(repro)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


@pytest.mark.spec("DIF-18")
def test_dif18_a_plug_in_file_loads_by_relative_and_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plug = _planted(tmp_path / "plug", "file_planted")
    (tmp_path / "elsewhere").mkdir()
    for cwd, spec in [
        (tmp_path, "plug/file_planted.py:Planted"),
        (tmp_path / "elsewhere", "../plug/file_planted.py:Planted"),
        (tmp_path / "elsewhere", f"{plug}:IgnoresViews"),
    ]:
        monkeypatch.chdir(cwd)
        loaded = load_impl(spec)
        assert type(loaded.impl).__name__ == spec.rpartition(":")[2]
        assert loaded.against.origin is Origin.FILE
        assert loaded.against.where == str(plug.resolve())
        assert loaded.against.portable == f"{plug.resolve()}:{spec.rpartition(':')[2]}"
        assert type(loaded.impl).__module__ == "fxoracle_plugin_file_planted"
        assert make_sides(spec, "sort").label == spec  # named as given
    assert str(plug.parent) not in sys.path


@pytest.mark.spec("DIF-18")
def test_dif18_a_module_in_the_working_directory_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `python -m` finds it: the working directory first, kept on `sys.path`."""
    _planted(tmp_path / "plug", "cwd_planted")
    package = tmp_path / "plug" / "cwd_package"
    package.mkdir()
    (package / "__init__.py").write_text("")
    _planted(package, "inner")
    monkeypatch.chdir(tmp_path / "plug")
    for spec in ("cwd_planted:Planted", "cwd_package.inner:SkipsAliasing"):
        loaded = load_impl(spec)
        assert type(loaded.impl).__name__ == spec.rpartition(":")[2]
        assert loaded.against.origin is Origin.WORKING_DIR
        assert loaded.against.where == str((tmp_path / "plug").resolve())
        assert loaded.against.portable == spec
    assert sys.path[0] == os.getcwd()


@pytest.mark.spec("DIF-18")
def test_dif18_a_module_on_sys_path_is_found_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _planted(tmp_path / "lib", "cwd_on_path")
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    monkeypatch.chdir(tmp_path)
    loaded = load_impl("cwd_on_path:Planted")
    assert loaded.against.origin is Origin.SYS_PATH
    assert loaded.against.where == str((tmp_path / "lib").resolve())
    assert str(tmp_path) not in sys.path


BAD_FILES = {  # --against -> what the one line says
    "missing.py:Planted": "missing.py: no such file",
    "notes.txt:Planted": "notes.txt is not a Python file (.py)",
    "folder/:Planted": "folder/: not a file",
    "good.py:Nope": "AttributeError: good.py has no `Nope`",
    "exits.py:Planted": "exits.py raised SystemExit(0) at import",
    "raises.py:Planted": "raises.py raised KeyError: 'boom' at import",
    "syntax.py:Planted": "syntax.py:2: syntax error",
    "cwd_no_such_module:Planted": "ModuleNotFoundError: No module named 'cwd_no_such_module' "
    "(not in the working directory nor on sys.path",
    "empty.py:Planted": "implements none of",
}


@pytest.mark.spec("DIF-18", "FIL-4")
@pytest.mark.parametrize("against", sorted(BAD_FILES))
def test_dif18_a_bad_plug_in_is_one_line_and_exit_2(
    against: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _planted(tmp_path, "good")
    (tmp_path / "notes.txt").write_text("class Planted: pass\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "raises.py").write_text("raise KeyError('boom')\n")
    (tmp_path / "syntax.py").write_text("x = 1\ndef f(:\n")
    (tmp_path / "empty.py").write_text("Planted = object()\n")
    (tmp_path / "model.py").write_text(GOOD_MODEL)
    monkeypatch.chdir(tmp_path)
    assert main(["diff", "model.py", "--against", against]) == 2
    assert f"--against {against}: {BAD_FILES[against]}" in one_line_error(capsys)
    stem = against.partition(".py:")[0]
    if "raised" in BAD_FILES[against] or "syntax" in BAD_FILES[against]:
        assert f"fxoracle_plugin_{stem}" not in sys.modules  # a failed import leaves none


@pytest.mark.spec("DIF-19", "DIF-15")
def test_dif19_a_plug_in_file_s_repro_fails_standalone_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named relative to where the diff ran; the repro loads it by its absolute path."""
    plug = _planted(tmp_path / "plug", "file_repro")
    for folder in ("run", "elsewhere"):
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / "run")
    model = load_model_file(CORPUS / "d15_mutation_ordering.py")
    report = run_diff([model], "../plug/file_repro.py:Planted", "sort", repro_dir=tmp_path / "r")
    assert report.against == "../plug/file_repro.py:Planted"
    (repro,) = map(Path, report.graphs[0].repros)
    header = [ln for ln in repro.read_text().splitlines() if ln.startswith("# plug-in ")]
    assert f"loaded from the file {str(plug.resolve())!r}" in header[0], header
    done = _run_standalone(repro, tmp_path / "elsewhere")
    assert done.returncode == 1 and "AssertionError" in done.stderr.splitlines()[-1], done.stderr


@pytest.mark.spec("DIF-19", "DIF-15")
def test_dif19_a_working_directory_module_s_repro_fails_standalone_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found through the working directory; the repro puts that folder on `sys.path`."""
    _planted(tmp_path / "plug", "cwd_repro")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "plug")
    model = load_model_file(CORPUS / "b1_float_constants.py")
    report = run_diff([model], "cwd_repro:Planted", "tracker", repro_dir=tmp_path / "r")
    (repro,) = map(Path, report.graphs[0].repros)
    text = repro.read_text()
    folder = str((tmp_path / "plug").resolve())
    assert f"# plug-in 'cwd_repro:Planted': its module is in {folder!r}" in text
    assert f"sys.path.insert(0, {folder!r})" in text
    done = _run_standalone(repro, tmp_path / "elsewhere")
    assert done.returncode == 1 and "AssertionError" in done.stderr.splitlines()[-1], done.stderr


@pytest.mark.spec("DIF-20")
def test_dif20_the_first_contract_s_module_names_where_its_names_went() -> None:
    with pytest.raises(ImportError) as raised:
        importlib.import_module("checker.impls")
    message = str(raised.value)
    assert "\n" not in message and "checker.impls" not in sys.modules
    for module in ("checker.oracle.protocol", "checker.oracle.sides.impls",
                   "checker.oracle.sides.loading", "checker.oracle.sides.cases"):  # fmt: skip
        assert module in message
    note = "Migrating from checker.impls"
    assert f"'{note}'" in message
    readme = (ROOT / "README.md").read_text()
    assert f"### {note}" in readme
    table = readme.split(f"### {note}")[1]
    missing = [n for n in OLD_NAMES if f"`{n}`" not in table.split("\n## ")[0]]
    assert not missing, f"the README's migration table leaves out {missing}"
    assert all(f"`{n}`" in (ROOT / "specs" / "08-oracle.md").read_text() for n in OLD_NAMES)


@pytest.mark.spec("DIF-20", "DIF-18")
def test_dif20_an_old_plug_in_fails_to_load_with_the_migration_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old_plugin.py"
    old.write_text("from checker.impls import DedupOutput\n\nclass Mine:\n    pass\n")
    (tmp_path / "model.py").write_text(GOOD_MODEL)
    assert main(["diff", str(tmp_path / "model.py"), "--against", f"{old}:Mine"]) == 2
    err = one_line_error(capsys)
    assert "raised ImportError: checker.impls was removed" in err
    assert "checker.oracle.protocol" in err and "Migrating from checker.impls" in err
