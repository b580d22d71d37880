"""Hostile data files: nothing stored in a `.pt2` or a `torch.save` file runs unless the user
passes `--trust-pickles` (spec chapter 10, FIL-1)."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from checker.cli import main
from checker.io.loaders import load_pt2
from checker.io.pickle_scan import pickle_globals
from checker.io.pt2_scan import plain_expr
from tests.support.models import Stack

pytestmark = pytest.mark.filterwarnings("ignore")


class Marker:
    """Unpickled, it creates the file `path` (what a hostile pickle would do, harmlessly)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


def _saved(obj: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _rewrite(src: Path, dst: Path, change: Callable[[str, bytes], bytes]) -> Path:
    """A copy of the archive `src` whose members `change` rewrites (name, bytes -> bytes)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, change(info.filename, zin.read(info.filename)))
    return dst


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A plain `.pt2` and one with a dynamic batch (its sizes are sympy expressions)."""
    tmp = tmp_path_factory.mktemp("pt2")
    torch.manual_seed(0)
    model, x = Stack(), torch.randn(4, 8)
    plain, dynamic = tmp / "plain.pt2", tmp / "dynamic.pt2"
    torch.export.save(torch.export.export(model, (x,)), str(plain))
    batch = torch.export.Dim("batch")
    torch.export.save(torch.export.export(model, (x,), dynamic_shapes=({0: batch},)), str(dynamic))
    return {"plain": plain, "dynamic": dynamic}


def _pickled_inputs(marker: Path) -> Callable[[str, bytes], bytes]:
    def change(name: str, data: bytes) -> bytes:
        return _saved((Marker(marker),)) if name.endswith("sample_inputs/model.pt") else data

    return change


def _pickled_weight(marker: Path) -> Callable[[str, bytes], bytes]:
    def change(name: str, data: bytes) -> bytes:
        if name.endswith("model_weights_config.json"):
            config = json.loads(data)
            entry = next(iter(config["config"].values()))
            entry["use_pickle"] = True
            return json.dumps(config).encode()
        return _saved(Marker(marker)) if name.endswith("data/weights/weight_0") else data

    return change


def _code_in_a_size(marker: Path) -> Callable[[str, bytes], bytes]:
    code = f"open({str(marker)!r}, 'w') and Symbol("

    def change(name: str, data: bytes) -> bytes:
        if not name.endswith("models/model.json"):
            return data
        text = data.decode()
        assert '"expr_str": "Symbol(' in text
        return text.replace(
            '"expr_str": "Symbol(', f'"expr_str": {json.dumps(code)[:-1]}', 1
        ).encode()

    return change


HOSTILE = {
    "sample_inputs": ("plain", _pickled_inputs),
    "use_pickle_weight": ("plain", _pickled_weight),
    "symbolic_size": ("dynamic", _code_in_a_size),
}


@pytest.mark.spec("FIL-1")
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_fil1_code_stored_in_a_pt2_never_runs(
    kind: str, archives: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pickle in the sample inputs or in a weight marked `use_pickle`, or a symbolic size that
    is Python: exit 2, one line naming the member, the marker never written."""
    base, make = HOSTILE[kind]
    marker = tmp_path / "marker"
    hostile = _rewrite(archives[base], tmp_path / "hostile.pt2", make(marker))
    assert main(["verify", str(hostile)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--trust-pickles" in err and "Traceback" not in err
    assert not marker.exists(), "FIL-1: the archive's code ran"


@pytest.mark.spec("FIL-1")
def test_fil1_a_plain_pt2_reads_no_pickle_and_says_so(
    archives: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The sample inputs of an honest archive are a pickle too: never read, the inputs come
    from the graph's metadata and a note says so; `--trust-pickles` reads them."""
    assert main(["verify", str(archives["plain"]), "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ok"] is True
    assert "fxoracle: note:" in captured.err and "metadata" in captured.err
    trusted = load_pt2(archives["plain"], trust_pickles=True).example_inputs
    torch.manual_seed(0)
    Stack()
    torch.testing.assert_close(trusted[0], torch.randn(4, 8))  # the saved input itself
    assert main(["verify", str(archives["plain"]), "--trust-pickles", "--json", "-"]) == 0
    assert "note" not in capsys.readouterr().err


def _block(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.sin(x)) + x


@pytest.mark.spec("FIL-1")
def test_fil1_a_torch_save_file_loads_only_when_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `torch.save` file is a pickle by nature: refused, then loaded with `--trust-pickles`
    when it holds `{"gm": ..., "example_inputs": ...}`."""
    gm = torch.fx.symbolic_trace(lambda x: _block(_block(_block(x))))  # no string annotations
    saved = tmp_path / "graph.pt"
    torch.save({"gm": gm, "example_inputs": (torch.randn(4, 8),)}, saved)
    assert main(["verify", str(saved)]) == 2
    assert "--trust-pickles" in capsys.readouterr().err
    assert main(["verify", str(saved), "--trust-pickles", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["invoke_calls"] == 3
    not_a_dict = tmp_path / "bare.pt"
    torch.save(gm, not_a_dict)
    assert main(["verify", str(not_a_dict), "--trust-pickles"]) == 2
    assert "holds a GraphModule" in capsys.readouterr().err


@pytest.mark.spec("FIL-1")
def test_fil1_a_damaged_pt2_says_what_torch_found(
    archives: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A weight's bytes missing: torch's own error, not `torch.export.load`'s "check the
    warnings above" (the warnings are off)."""
    gone = tmp_path / "gone.pt2"
    with zipfile.ZipFile(archives["plain"]) as z, zipfile.ZipFile(gone, "w") as out:
        for info in z.infolist():
            if not info.filename.endswith("data/weights/weight_0"):
                out.writestr(info, z.read(info.filename))
    assert main(["verify", str(gone)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "data/weights/weight_0" in err
    assert "warnings above" not in err


@pytest.mark.spec("FIL-1")
@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("Symbol('s77', positive=True, integer=True)", True),
        ("2*s0 + 1", True),
        ("Max(1, FloorDiv(s0, 2))", True),
        ("Eq(Mod(s0, 2), 0)", True),
        ("__import__('os').system('true')", False),
        ("s0.func", False),
        ("eval('1')", False),
        ("chr(95)", False),
        ("(lambda: 1)()", False),
        ("[s0][0]", False),
        ("sympify('s0')", False),
        ("Symbol(f's{1}')", False),
    ],
)
def test_fil1_symbolic_sizes_are_plain_expressions(text: str, plain: bool) -> None:
    assert plain_expr(text) is plain


@pytest.mark.spec("FIL-1")
def test_fil1_pickle_globals_follow_the_stack_without_running_it() -> None:
    """Every global a pickle names, protocol 0 to 5; `STACK_GLOBAL` reads the two strings
    really on top of the stack (a `POP` cannot hide `os.system` behind harmless names)."""
    for protocol in range(6):
        names = pickle_globals(pickle.dumps([Marker(Path("x")), torch.float32], protocol))
        assert names is not None and "torch.float32" in names
        assert any(n.endswith(".open") for n in names)
    # PROTO 4; push 'os', 'system', 'x', 'y'; POP; STACK_GLOBAL; STOP
    crafted = b"\x80\x04" + b"".join(b"\x8c" + bytes([len(s)]) + s for s in (b"os", b"system",
                                     b"x", b"y")) + b"0\x93."  # fmt: skip
    assert pickle_globals(crafted) == ("system.x",)
    assert pickle_globals(b"\x80\x04\x82\x01.") is None  # an extension code: cannot be read
