"""The exit status stays true and the one line stays one escaped line, whatever user code does
(spec chapter 10, FIL-10, FIL-11): `os._exit`, `atexit`, a segfault, threads left behind, a
plug-in that never returns, prints on stdout, names with escape codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checker.cli import main
from checker.io.shown import one_line, shown
from tests.support.errors import one_line_error
from tests.support.paths import ROOT

pytestmark = pytest.mark.filterwarnings("ignore")

GOOD = """import torch


def model(x):
    for _ in range(2):
        x = torch.sin(x) + 1
    return x


example_inputs = (torch.ones(3),)
"""
ENDS_THE_RUN = {
    "os_exit_at_import": ("import os\nos._exit(0)\n", "user code ended the run"),
    "atexit_after_an_error": (
        "import atexit, os\natexit.register(os._exit, 0)\nraise ValueError('mine')\n",
        "raised ValueError: mine at import",
    ),
    "segfault_at_import": ("import ctypes\nctypes.string_at(0)\n", "killed by SIGSEGV"),
    "sigterm_to_itself": (
        "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
        "killed by SIGTERM",
    ),
}


def _fxoracle(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The `fxoracle` command as a user runs it (supervised), from `cwd`."""
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "checker.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip


@pytest.mark.spec("FIL-11")
@pytest.mark.parametrize("case", sorted(ENDS_THE_RUN))
def test_fil11_user_code_that_ends_the_process_is_exit_2_with_a_line(
    case: str, tmp_path: Path
) -> None:
    source, expected = ENDS_THE_RUN[case]
    (tmp_path / "m.py").write_text(source)
    done = _fxoracle(["verify", "m.py"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr


@pytest.mark.spec("FIL-11")
def test_fil11_a_segfault_under_workers_names_the_model(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "crash.py").write_text("import ctypes\nctypes.string_at(0)\n")
    done = _fxoracle(["diff", "good.py", "crash.py", "--against", "reference", "--workers",
                      "2"], tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "crash.py" in done.stderr.splitlines()[-1], done.stderr


@pytest.mark.spec("FIL-11")
def test_fil11_threads_left_behind_do_not_keep_the_run_alive(tmp_path: Path) -> None:
    sleeper = "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,)).start()\n"
    (tmp_path / "m.py").write_text(sleeper + GOOD)
    done = _fxoracle(["verify", "m.py", "--json", "-"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True


@pytest.mark.spec("FIL-11")
def test_fil11_a_plug_in_past_the_time_limit_is_blamed_and_the_run_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.py").write_text(GOOD)
    plugin = tmp_path / "slow.py"
    plugin.write_text("import time\nclass Mine:\n    def split(self, gm, callback, keep, "
                      "affix):\n        time.sleep(3600)\n")  # fmt: skip
    start = time.monotonic()
    argv = ["diff", str(tmp_path / "m.py"), "--against", f"{plugin}:Mine", "--time-limit", "2",
            "--json", "-"]  # fmt: skip
    assert main(argv) == 1
    assert time.monotonic() - start < 300
    assert "took longer than 2 s" in capsys.readouterr().out


@pytest.mark.spec("FIL-11")
def test_fil11_what_a_model_prints_never_reaches_the_json_on_stdout(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.py"
    path.write_text("import os\nprint('hello')\nos.write(1, b'raw\\n')\n" + GOOD)
    assert main(["verify", str(path), "--json", "-"]) == 0
    out, err = capfd.readouterr()
    assert json.loads(out)["ok"] is True
    assert "hello" in err and "raw" in err


@pytest.mark.spec("FIL-11")
def test_fil11_a_base_exception_of_the_users_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.py"
    path.write_text("class Mine(BaseException):\n    pass\nraise Mine('own')\n")
    assert main(["verify", str(path)]) == 2
    assert "raised Mine: own at import" in one_line_error(capsys)


@pytest.mark.spec("FIL-11")
@pytest.mark.parametrize("where", ["closed", "full"])
def test_fil11_a_stdout_closed_or_full_is_exit_2(where: str, tmp_path: Path) -> None:
    if where == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    stdout = "/dev/full" if where == "full" else None
    shell = f"exec >{stdout}" if stdout else "exec >&-"
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(["sh", "-c", f'{shell}; exec "$0" -m checker.cli course list',
                           sys.executable], cwd=tmp_path, env=env, capture_output=False,
                          stderr=subprocess.PIPE, text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "cannot write" in done.stderr, done.stderr


@pytest.mark.spec("FIL-10")
def test_fil10_escape_codes_and_newlines_in_a_name_stay_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m\x1b[31m\nx.py"
    path.write_text("raise ValueError('red \\x1b[31m\\nnext line')\n")
    assert main(["verify", str(path)]) == 2
    err = one_line_error(capsys)
    assert "\x1b" not in err and "\\x1b[31m" in err and "\\n" in err


@pytest.mark.spec("FIL-10")
def test_fil10_escape_codes_in_a_report_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m\x1b]0;title\x07.py"
    path.write_text(GOOD)
    html = tmp_path / "r.html"
    assert main(["verify", str(path), "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b]0;title" in out
    assert "\x1b" not in html.read_text()


@pytest.mark.spec("FIL-10")
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_fil10_a_folder_or_a_fifo_as_input_is_told_as_such(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.py"
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    assert main(["verify", str(path)]) == 2
    err = one_line_error(capsys)
    assert ("is a folder" if kind == "folder" else "is not a regular file") in err


@pytest.mark.spec("FIL-10")
def test_fil10_shown_escapes_every_control_and_format_character() -> None:
    assert shown("a\x1b[2Jb\r\n\x00\x9b\u202e\udcff") == "a\\x1b[2Jb\\r\\n\\x00\\x9b\\u202e\\udcff"
    assert one_line("9" * 3_000_000).endswith("(2999000 more characters)")


@pytest.mark.spec("FIL-11")
def test_fil11_a_region_name_whose_eq_raises_is_the_plug_ins_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.py").write_text(GOOD)
    plugin = tmp_path / "evil.py"
    plugin.write_text(
        "class Name(str):\n    def __eq__(self, other):\n        raise RuntimeError('eq')\n"
        "    __hash__ = str.__hash__\n\n\nclass Mine:\n    def find_regions(self, graph):\n"
        "        return [[[Name(n.name) for n in graph.gm.graph.nodes][:1]] * 2]\n"
    )
    argv = ["diff", str(tmp_path / "m.py"), "--against", f"{plugin}:Mine", "--json", "-"]
    assert main(argv) == 1
    report = json.loads(capsys.readouterr().out)
    blamed = {(d["kind"], d["wrong"]) for d in report["divergences"]}
    assert blamed and all(k != "oracle-error" and w != "reference" for k, w in blamed), blamed


@pytest.mark.spec("FIL-11")
def test_fil11_a_model_that_runs_past_the_time_limit_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.py"
    path.write_text("import torch\ndef model(x):\n    for _ in range(10**9):\n        pass\n"
                    "    return x + 1\nexample_inputs = (torch.ones(3),)\n")  # fmt: skip
    start = time.monotonic()
    assert main(["verify", str(path), "--time-limit", "3"]) == 2
    assert time.monotonic() - start < 300
    assert "took longer than 3 s" in one_line_error(capsys)
