"""A torch fxoracle does not mirror (spec chapter 10, FIL-14): one line and exit 2, from the CLI
and from a repro, never a traceback. The version is faked through the seam
(`reference.torch_version.installed`) or, in a child process, through `torch.__version__`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checker.cli import main
from reference.errors import FxOracleError
from reference.torch_version import MIRRORED, behaviour_of, installed
from tests.support.paths import ROOT

RELEASES = "fxoracle mirrors torch 2.11 to 2.15 (tested on " + ", ".join(MIRRORED) + ")"
# a child that reports torch as `version`, then runs `code`
FAKED = "import sys, runpy, torch; torch.__version__ = {version!r}; {code}"


def _faked(version: str, code: str) -> subprocess.CompletedProcess[str]:
    run = [sys.executable, "-c", FAKED.format(version=version, code=code)]
    return subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=300)


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    return stderr.strip()


@pytest.mark.spec("FIL-14")
@pytest.mark.parametrize("version", ["2.10.0", "2.16.0+cu130", "1.13.1", "3.0.0a0"])
def test_fil14_an_unmirrored_release_is_refused_by_the_seam(
    version: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(FxOracleError, match=r"mirrors torch 2\.11 to 2\.15"):
        behaviour_of(version)
    with pytest.raises(SystemExit) as stopped:
        installed(version)
    assert stopped.value.code == 2
    line = _one_line(capsys.readouterr().err)
    assert RELEASES in line and f"this is torch {version}" in line


@pytest.mark.spec("FIL-14")
@pytest.mark.parametrize("version", ["2.11.0", "2.12.3+cu130", "2.15.0a0+git1"])
def test_fil14_a_patch_of_a_mirrored_release_is_mirrored(version: str) -> None:
    assert installed(version).version == version.split("+")[0].replace("a0", "")


@pytest.mark.spec("FIL-14")
def test_fil14_the_cli_stops_before_reading_torch_s_internals() -> None:
    """`python -m checker.cli verify` on torch 2.10: exit 2, one line, nothing on stdout."""
    argv = ["fxoracle", "verify", "tests/corpus/d01_single_subgraph.py"]
    code = f"sys.argv = {argv!r}; runpy.run_module('checker.cli', run_name='__main__')"
    ran = _faked("2.10.0", code)
    assert ran.returncode == 2 and not ran.stdout, ran.stdout + ran.stderr
    assert _one_line(ran.stderr) == f"fxoracle: error: {RELEASES}; this is torch 2.10.0: " + (
        "install one of those (make setup TORCH=2.13.0)"
    )
    library = _faked("2.16.0", "import reference")  # a library import stops the same way
    assert library.returncode == 2 and RELEASES in _one_line(library.stderr)


@pytest.mark.spec("FIL-14", "DIF-8")
def test_fil14_a_repro_stops_on_an_unmirrored_torch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repro of a model file with `from __future__` (kept first): on a mirrored torch it fails
    on torch's bug as before; on torch 2.16 it exits 2 with one line before the model runs."""
    repros = tmp_path / "repros"
    model = "tests/corpus/a1_view_read_then_base_update.py"
    argv = ["diff", model, "--against", "torch", "--component", "dedup"]
    assert main([*argv, "--repro-dir", str(repros)]) == 1
    capsys.readouterr()
    (repro,) = repros.iterdir()
    assert "from __future__ import annotations\nimport sys as _sys" in repro.read_text()
    mirrored = subprocess.run(
        [sys.executable, str(repro)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert mirrored.returncode == 1 and "AssertionError" in mirrored.stderr, mirrored.stderr
    ran = _faked("2.16.0", f"runpy.run_path({str(repro)!r}, run_name='__main__')")
    assert ran.returncode == 2 and not ran.stdout
    line = _one_line(ran.stderr)
    assert line.startswith("fxoracle repro: " + RELEASES) and "this is torch 2.16.0" in line
