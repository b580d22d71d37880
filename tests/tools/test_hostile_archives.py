"""Data files within bounds: a hostile `.pt2` or campaign file is exit 2 with one line, in
bounded time and memory (spec chapter 10, FIL-12)."""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from checker.cli import main
from checker.io.bounds import MAX_MEMBERS, bounded_expr, check_members
from checker.io.inputs import random_like
from reference.errors import FxOracleError
from tests.support.errors import one_line_error
from tests.support.models import Stack

pytestmark = pytest.mark.filterwarnings("ignore")
Change = Callable[[zipfile.ZipInfo, bytes], tuple[zipfile.ZipInfo, bytes]]


@pytest.fixture(scope="module")
def dynamic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `.pt2` with a dynamic batch: its sizes are expressions."""
    path = tmp_path_factory.mktemp("pt2") / "dynamic.pt2"
    torch.manual_seed(0)
    batch = torch.export.Dim("batch")
    exported = torch.export.export(Stack(), (torch.randn(4, 8),), dynamic_shapes=({0: batch},))
    torch.export.save(exported, str(path))
    return path


def _rewrite(src: Path, dst: Path, change: Change, extra: bytes | None = None) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(*change(info, zin.read(info.filename)))
        if extra is not None:
            root = zin.namelist()[0].split("/")[0]
            zout.writestr(f"{root}/data/weights/bomb", extra, zipfile.ZIP_DEFLATED)
    return dst


def _model_json(edit: Callable[[str], str]) -> Change:
    def change(info: zipfile.ZipInfo, data: bytes) -> tuple[zipfile.ZipInfo, bytes]:
        if info.filename.endswith("models/model.json"):
            return info, edit(data.decode()).encode()
        return info, data

    return change


def _size(expr: str) -> Change:
    def edit(text: str) -> str:
        at = text.index('"expr_str": "') + len('"expr_str": "')
        return text[:at] + expr + text[text.index('"', at) :]

    return _model_json(edit)


def _same(info: zipfile.ZipInfo, data: bytes) -> tuple[zipfile.ZipInfo, bytes]:
    return info, data


def _patched(path: Path, field: str, value: int) -> Path:
    """Every header of `path` claims `value` in `field` (`flags` or `method`): what `zipfile`
    would not write."""
    raw = bytearray(path.read_bytes())
    central, local = {"flags": (8, 6), "method": (10, 8)}[field]
    for signature, offset in ((b"PK\x01\x02", central), (b"PK\x03\x04", local)):
        at = raw.find(signature)
        while at >= 0:
            raw[at + offset : at + offset + 2] = value.to_bytes(2, "little")
            at = raw.find(signature, at + 4)
    path.write_bytes(bytes(raw))
    return path


def _hostile(kind: str, src: Path, dst: Path) -> Path:
    match kind:
        case "power_tower":
            return _rewrite(src, dst, _size("9**9**9**9"))
        case "million_digits":
            return _rewrite(src, dst, _size("9" * 3_000_000))
        case "deep_json":
            return _rewrite(src, dst, _model_json(lambda _: "[" * 200_000 + "]" * 200_000))
        case "zip_bomb":
            return _rewrite(src, dst, _same, extra=bytes(64 << 20))
        case "encrypted":
            return _patched(_rewrite(src, dst, _same), "flags", 0x1)
        case _:
            return _patched(_rewrite(src, dst, _same), "method", 99)


EXPECTED = {
    "power_tower": "beyond fxoracle's bounds",
    "million_digits": "a symbolic size",
    "deep_json": "nested too deep",
    "zip_bomb": "a zip bomb",
    "encrypted": "is encrypted",
    "method_99": "compression method 99",
}


@pytest.mark.spec("FIL-12")
@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_fil12_a_hostile_pt2_is_one_short_line_at_once(
    kind: str, dynamic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _hostile(kind, dynamic, tmp_path / f"{kind}.pt2")
    start = time.monotonic()
    assert main(["verify", str(path)]) == 2
    assert time.monotonic() - start < 60
    err = one_line_error(capsys)
    assert EXPECTED[kind] in err and len(err) < 1200, err[:300]


@pytest.mark.spec("FIL-12")
def test_fil12_too_many_members_are_refused_before_any_is_read() -> None:
    members = [zipfile.ZipInfo(f"m{i}") for i in range(MAX_MEMBERS + 1)]
    with pytest.raises(FxOracleError, match="members"):
        check_members("x.pt2", members)


@pytest.mark.spec("FIL-12")
def test_fil12_a_declared_input_too_large_is_refused_not_allocated() -> None:
    meta = torch.empty(0)
    with pytest.raises(FxOracleError, match="elements"):
        random_like(meta, [2**40, 8], torch.Generator())


@pytest.mark.spec("FIL-12")
@pytest.mark.parametrize(
    ("text", "bounded"),
    [("s0*2 + 1", True), ("Max(2, s0*s1*s2*s3*s4)", True), ("2**64", True),
     ("9**9**9**9", False), ("2**300", False), ("(2**64)**64", False), ("9" * 50, False),
     ("PowByNatural(s0, 9**99)", False)],
)  # fmt: skip
def test_fil12_size_expressions_are_bounded_before_anything_evaluates_them(
    text: str, bounded: bool
) -> None:
    assert (bounded_expr(text) is None) is bounded


@pytest.mark.spec("FIL-12")
def test_fil12_a_deep_campaign_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.json"
    mark = '{\n  "$fxoracle": "fuzz",\n'  # as fxoracle's own begins (FIL-18): it is read
    out.write_text(mark + '"seed": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert main(["fuzz", "--out", str(out), "--max-models", "1", "--workers", "1"]) == 2
    assert "holds no fxoracle campaign" in one_line_error(capsys)
    json.loads('{"a": 1}')  # the module's json is the standard one, untouched
