"""Further hostile inputs, each refused with one escaped line before any work (spec chapter 10,
FIL-9, FIL-10, FIL-12): paths that reach an input by another road, inputs that are no file,
exceptions that fight back, archives and campaign files that lie."""

from __future__ import annotations

import json
import os
import socket
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.cli import main
from tests.support.errors import one_line_error

pytestmark = pytest.mark.filterwarnings("ignore")

MODEL = "import torch\nmodel = torch.sin\nexample_inputs = (torch.ones(2),)\n"
Setup = Callable[[Path], list[str]]


def _paths(tmp: Path) -> list[str]:
    (tmp / "sub").mkdir()
    return ["verify", str(tmp / "m.py"), "--json", str(tmp / "sub/../m.py")]


def _hard_link(tmp: Path) -> list[str]:
    os.link(tmp / "m.py", tmp / "hard.json")
    return ["verify", str(tmp / "m.py"), "--json", str(tmp / "hard.json")]


def _linked_folder(tmp: Path) -> list[str]:
    (tmp / "here").symlink_to(tmp)
    return ["verify", str(tmp / "m.py"), "--json", str(tmp / "here/m.py")]


def _two_links(tmp: Path) -> list[str]:
    (tmp / "r.json").write_text("{}")
    os.link(tmp / "r.json", tmp / "r.html")
    return ["verify", str(tmp / "m.py"), "--json", str(tmp / "r.json"), "--html",
            str(tmp / "r.html")]  # fmt: skip


def _loop(tmp: Path) -> list[str]:
    (tmp / "loop").symlink_to(tmp / "loop")
    return ["verify", str(tmp / "m.py"), "--json", str(tmp / "loop")]


def _socket(tmp: Path) -> list[str]:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp / "sock"))
    return ["verify", str(tmp / "m.py"), "--json", str(tmp / "sock")]


def _repro_dir_link(tmp: Path) -> list[str]:
    (tmp / "afile").write_text("x")
    (tmp / "rlink").symlink_to(tmp / "afile")
    return ["diff", str(tmp / "m.py"), "--against", "torch", "--repro-dir", str(tmp / "rlink")]


def _repro_dir_proc(tmp: Path) -> list[str]:
    return ["diff", str(tmp / "m.py"), "--against", "torch", "--repro-dir", "/proc/self/fxo"]


def _fuzz_out_plugin(tmp: Path) -> list[str]:
    plug = tmp / "plug.py"
    plug.write_text(
        "class Mine:\n    def split(self, gm, callback, keep, affix):\n        return gm\n"
    )
    return ["fuzz", "--against", f"{plug}:Mine", "--out", str(plug), "--max-models", "1"]


def _answer_link(tmp: Path) -> list[str]:
    (tmp / "ans.py").write_text("x = 1\n")
    os.link(tmp / "ans.py", tmp / "ans.json")
    return ["course", "check", "01.1", str(tmp / "ans.py"), "--json", str(tmp / "ans.json")]


def _source(text: str | bytes) -> Setup:
    def setup(tmp: Path) -> list[str]:
        path = tmp / "bad.py"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return ["verify", str(path)]

    return setup


def _zip(members: dict[str, str], cut: bool = False) -> Setup:
    def setup(tmp: Path) -> list[str]:
        path = tmp / "x.pt2"
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
        if cut:
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return ["verify", str(path)]

    return setup


def _campaign(**change: object) -> Setup:
    def setup(tmp: Path) -> list[str]:
        base = {"$fxoracle": "fuzz", "seed": 0, "against": "torch", "torch": "2.13.0"}
        base |= {"models": 1}  # `$fxoracle` first: a campaign fxoracle wrote (FIL-18)
        base |= {"diverging_models": 0, "by_wrong": {}, "elapsed_s": 1.0, "findings": []}
        text = json.dumps(base | change, indent=2).replace('"NAN"', "NaN")
        (tmp / "f.json").write_text(text)
        return ["fuzz", "--out", str(tmp / "f.json"), "--max-models", "1", "--workers", "1"]

    return setup


CASES: dict[str, tuple[Setup, str]] = {
    "json_through_dotdot_to_the_model": (_paths, "is an input"),
    "json_a_hard_link_of_the_model": (_hard_link, "is an input"),
    "json_through_a_linked_folder": (_linked_folder, "is an input"),
    "json_and_html_hard_links_of_one_file": (_two_links, "would be one file"),
    "json_a_symlink_loop": (_loop, "cannot be written"),
    "json_a_socket": (_socket, "neither a file"),
    "repro_dir_a_link_to_a_file": (_repro_dir_link, "is not a folder"),
    "repro_dir_under_proc": (_repro_dir_proc, "cannot be made"),
    "fuzz_out_the_plug_in": (_fuzz_out_plugin, "is an input"),
    "fuzz_out_stdout": (lambda _: ["fuzz", "--out", "-", "--max-models", "1"], "not to stdout"),
    "course_json_a_hard_link_of_the_answer": (_answer_link, "is an input"),
    "model_not_utf8": (_source(b"x = '\xff\xfe'\n"), "syntax error"),
    "model_nested_past_the_parser": (_source("x = " + "-" * 200_000 + "1\n"), "bad.py"),
    "message_of_3_mb": (_source("raise ValueError('A' * 3_000_000)\n"), "more characters"),
    "str_that_raises": (
        _source(
            "class E(Exception):\n    def __str__(self):\n        raise RuntimeError\nraise E()\n"
        ),
        "its message cannot be read",
    ),
    "exit_code_whose_repr_raises": (
        _source(
            "class C:\n    def __repr__(self):\n        raise RuntimeError\nraise SystemExit(C())\n"
        ),
        "SystemExit('C')",
    ),
    "empty_zip": (_zip({}), "without an exported"),
    "member_name_with_escapes": (_zip({"evil\x1b[31m\nname": "x"}), "without an exported"),
    "truncated_pt2": (_zip({"a/models/model.json": "{}" * 1000}, cut=True), "not a .pt2"),
    "json_nan_in_pt2": (_zip({"a/models/model.json": '{"x": NaN}'}), "not JSON"),
    "campaign_seed_a_string": (_campaign(seed="0"), "holds no fxoracle campaign"),
    "campaign_elapsed_nan": (_campaign(elapsed_s="NAN"), "holds no fxoracle campaign"),
    "campaign_findings_a_dict": (_campaign(findings={}), "holds no fxoracle campaign"),
}


@pytest.mark.spec("FIL-9", "FIL-10", "FIL-12")
@pytest.mark.parametrize("case", sorted(CASES))
def test_fil9_hostile_inputs_are_one_escaped_line_before_any_work(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.py").write_text(MODEL)
    setup, expected = CASES[case]
    argv = setup(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()}
    assert main(argv) == 2
    err = one_line_error(capsys)
    assert expected in err and "\x1b" not in err and len(err) < 1200, err[:300]
    assert all(p.read_bytes() == data for p, data in before.items()), "an input changed"
