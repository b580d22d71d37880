"""Hostile output paths: checked before any work, written without replacing what a user has
(spec chapter 10, FIL-2, FIL-3)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from checker.cli import main
from checker.io.reports import write_atomically
from tests.support.errors import one_line_error
from tests.support.models import marked_model
from tests.support.paths import ROOT

pytestmark = pytest.mark.filterwarnings("ignore")


def _model(tmp_path: Path, name: str = "model.py") -> tuple[Path, Path]:
    return marked_model(tmp_path, name)


BAD = {
    "missing_folder": (["--json", "{tmp}/no/such/folder/r.json"], "no such folder"),
    "a_folder": (["--html", "{tmp}"], "is a folder"),
    "the_model_itself": (["--json", "{tmp}/model.py"], "is an input of this run"),
    "twice_the_same_file": (["--json", "{tmp}/r", "--html", "{tmp}/r"], "would be one file"),
    "a_closed_descriptor": (["--json", "/dev/fd/987"], "cannot be written"),
}


@pytest.mark.spec("FIL-2")
@pytest.mark.parametrize("case", sorted(BAD))
def test_fil2_a_bad_output_path_stops_the_run_before_any_work(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2, one line, and the model never even loaded; the model file is untouched."""
    path, marker = _model(tmp_path)
    source = path.read_text()
    args, expected = BAD[case]
    argv = ["verify", str(path), *(a.format(tmp=tmp_path) for a in args)]
    assert main(argv) == 2
    assert expected in one_line_error(capsys)
    assert not marker.exists(), "FIL-2: the run began before its outputs were checked"
    assert path.read_text() == source


@pytest.mark.spec("FIL-2")
def test_fil2_a_repro_folder_that_is_a_file_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, marker = _model(tmp_path)
    not_a_folder = tmp_path / "repros"
    not_a_folder.write_text("mine")
    assert main(["diff", str(path), "--against", "torch", "--repro-dir", str(not_a_folder)]) == 2
    assert "is not a folder" in one_line_error(capsys)
    assert not marker.exists() and not_a_folder.read_text() == "mine"


@pytest.mark.spec("FIL-3")
def test_fil3_a_symlinked_report_is_written_through_the_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _model(tmp_path)
    target = tmp_path / "reports" / "r.json"
    target.parent.mkdir()
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    assert main(["verify", str(path), "--json", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["ok"] is True
    capsys.readouterr()


@pytest.mark.spec("FIL-3")
def test_fil3_a_fifo_is_written_straight(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    write_atomically(fifo, "report\n")
    reader.join(timeout=30)
    assert got == ["report\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode), "FIL-3: the FIFO was replaced"


@pytest.mark.spec("FIL-3")
def test_fil3_a_report_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    private = tmp_path / "r.json"
    private.write_text("old")
    private.chmod(0o600)
    write_atomically(private, "new")
    assert private.read_text() == "new" and stat.S_IMODE(private.stat().st_mode) == 0o600


@pytest.mark.spec("FIL-3")
def test_fil3_temporary_files_of_a_killed_run_never_accumulate(tmp_path: Path) -> None:
    """A run killed mid-write leaves `.<name>.<pid>.<random>.fxoracle-tmp`; the next write
    removes those whose process is gone, and only those."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead = int(done.stdout)
    report = tmp_path / "r.json"
    stale = [tmp_path / f".r.json.{dead}.k{i}.fxoracle-tmp" for i in range(3)]
    running = tmp_path / f".r.json.{os.getpid()}.abc.fxoracle-tmp"
    for leftover in [*stale, running]:
        leftover.write_text("half a report")
    write_atomically(report, "{}\n")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([running.name, report.name])


DEVICES = """
set -e
mount --make-rprivate /
mount -t tmpfs fxoracle-dev /dev
mknod -m 666 /dev/null c 1 3
mknod -m 666 /dev/full c 1 7
mknod -m 666 /dev/zero c 1 5
mknod -m 666 /dev/urandom c 1 9
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mkdir "$TMP/ro" "$TMP/small"
mount -t tmpfs -o ro fxoracle-ro "$TMP/ro"
mount -t tmpfs -o size=4k fxoracle-small "$TMP/small"
"$PYTHON" -c "$RUN" "$MODEL" "$TMP"
stat -c '%n %F' /dev/null /dev/full
readlink /dev/stdout
ls -A "$TMP/small"
"""
RUN = """import sys
from checker.cli import main
model, tmp = sys.argv[1:]
codes = [main(["verify", model, "--json", "/dev/null"]),
         main(["verify", model, "--html", "/dev/full"]),
         main(["verify", model, "--json", "/dev/stdout"]),
         main(["verify", model, "--json", tmp + "/ro/r.json"]),
         main(["verify", model, "--html", tmp + "/small/r.html"])]
print("codes", codes, flush=True)
"""


def _private_mounts() -> bool:
    """Root, with `unshare` allowed to make a private mount namespace."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.spec("FIL-2", "FIL-3")
@pytest.mark.skipif(not _private_mounts(), reason="needs root and unshare -m (a FIFO and a "
                    "symlink test the same rule without)")  # fmt: skip
def test_fil3_device_nodes_are_written_straight_never_replaced(tmp_path: Path) -> None:
    """As root, in a private mount namespace whose /dev is a fresh tmpfs (a bug there cannot
    touch the machine's own /dev): `--json /dev/null` exits 0, `--html /dev/full` exits 2 (no
    space), `--json /dev/stdout` reaches stdout, and the three nodes stay what they were; a
    read-only folder is refused before the run (root may write anywhere else) and a full disk
    is exit 2 with no temporary file left."""
    path, _ = _model(tmp_path)
    env = os.environ | {"PYTHON": sys.executable, "RUN": RUN, "MODEL": str(path),
                        "TMP": str(tmp_path), "PYTHONPATH": str(ROOT)}  # fmt: skip
    done = subprocess.run(["unshare", "-m", "sh", "-c", DEVICES], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out, err = done.stdout, done.stderr
    assert "codes [0, 2, 0, 2, 2]" in out, out[-2000:]
    assert "/dev/full: cannot write: No space left on device" in err
    assert "ro/r.json: folder" in err and "is read-only" in err
    assert "small/r.html: cannot write: No space left on device" in err
    assert '"ok": true' in out  # the JSON written to /dev/stdout
    assert "/dev/null character special file" in out
    assert "/dev/full character special file" in out
    assert out.rstrip().endswith("/proc/self/fd/1"), "nothing left in the full tmpfs"
