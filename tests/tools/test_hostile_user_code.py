"""Hostile user code: whatever a model file, a graph-module file or a plug-in raises, `SystemExit`
included, is bad input: exit 2 and one line naming the file (spec chapter 10, FIL-4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.cli import main
from tests.support.errors import one_line_error

pytestmark = pytest.mark.filterwarnings("ignore")

GOOD_MODEL = "import torch\nmodel = torch.sin\nexample_inputs = (torch.ones(2),)\n"
AT_IMPORT = {
    "exit_0": ("import sys\nsys.exit(0)\n", "raised SystemExit(0) at import"),
    "exit_2": ("import sys\nsys.exit(2)\n", "raised SystemExit(2) at import"),
    "exit_text": ("raise SystemExit('bye')\n", "raised SystemExit('bye') at import"),
    "raises": ("raise KeyError('boom')\n", "raised KeyError: 'boom' at import"),
}


@pytest.mark.spec("FIL-4")
@pytest.mark.parametrize("case", sorted(AT_IMPORT))
@pytest.mark.parametrize("command", ["verify", "explain", "diff"])
def test_fil4_a_model_file_that_exits_or_raises_is_bad_input(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, expected = AT_IMPORT[case]
    path = tmp_path / "model.py"
    path.write_text(source)
    argv = [command, str(path), *(["--against", "torch"] if command == "diff" else [])]
    assert main(argv) == 2
    err = one_line_error(capsys)
    assert f"{path} {expected}" in err


@pytest.mark.spec("FIL-4")
def test_fil4_a_graph_module_file_that_exits_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "graph.py"
    path.write_text("import sys\ngm = None\nsys.exit(0)\n")
    assert main(["verify", str(path)]) == 2
    assert "raised SystemExit(0) at import" in one_line_error(capsys)


@pytest.mark.spec("FIL-4")
def test_fil4_an_exit_past_every_loader_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sys.exit` inside a plug-in's method, after everything loaded: one line, exit 2."""
    (tmp_path / "exiting_plugin.py").write_text(
        "import sys\nclass Mine:\n    def split(self, gm, callback, keep, affix):\n"
        "        sys.exit(3)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    model = tmp_path / "model.py"
    model.write_text(GOOD_MODEL)
    assert main(["diff", str(model), "--against", "exiting_plugin:Mine"]) == 2
    assert "diff: user code raised SystemExit(3)" in one_line_error(capsys)


PLUGINS = {
    "raises_at_import": ("raise ImportWarning('half installed')\n", "Mine",
                         "raised ImportWarning: half installed at import"),
    "exits_at_import": ("import sys\nsys.exit(0)\n", "Mine", "raised SystemExit(0) at import"),
    "constructor_raises": (
        "class Mine:\n    def __init__(self):\n        raise RuntimeError('no licence')\n"
        "    def split(self, gm, callback, keep, affix):\n        return gm\n",
        "Mine", "Mine() raised RuntimeError: no licence when constructed",
    ),
}  # fmt: skip


@pytest.mark.spec("FIL-4")
@pytest.mark.parametrize("case", sorted(PLUGINS))
def test_fil4_a_plug_in_that_fails_to_load_is_bad_input(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source, attr, expected = PLUGINS[case]
    (tmp_path / f"hostile_{case}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    model = tmp_path / "model.py"
    model.write_text(GOOD_MODEL)
    assert main(["diff", str(model), "--against", f"hostile_{case}:{attr}"]) == 2
    assert expected in one_line_error(capsys)
