"""Loaders: `.pt2` archives, graph-module files and dispatch (checker/io/loaders.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import torch
import torch.fx

from checker.io.loaders import load_any, load_graph_module_file, load_pt2
from checker.io.model_file import Model
from reference import find_identical_regions
from reference.dynamo.capture import Capture
from reference.errors import FxOracleError
from tests.support.models import Stack

BLOCK_NAMES = [
    ["linear", "relu", "add"],
    ["linear_1", "relu_1", "add_1"],
    ["linear_2", "relu_2", "add_2"],
]


def _region_names(loaded: Capture) -> list[list[list[str]]]:
    groups = find_identical_regions(loaded.gm.graph, loaded.tracker)
    return [[[n.name for n in region] for region in group] for group in groups]


@pytest.fixture(scope="module")
def model() -> Stack:
    torch.manual_seed(0)
    return Stack()


@pytest.fixture(scope="module")
def saved(model: Stack, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pt2") / "stack.pt2"
    torch.export.save(torch.export.export(model, (torch.randn(4, 8),)), str(path))
    return path


def test_pt2_finds_the_repeated_blocks(model: Stack, saved: Path) -> None:
    loaded = load_pt2(saved)
    assert _region_names(loaded) == [BLOCK_NAMES]
    assert loaded.dynamic is False
    assert [n.name for n in loaded.gm.graph.find_nodes(op="placeholder")] == ["x"]
    assert all("val" in n.meta for n in loaded.gm.graph.nodes)
    assert all("stack_trace" in n.meta for n in loaded.gm.graph.nodes if n.op == "call_function")
    (x,) = loaded.example_inputs
    (out,) = loaded.gm(*loaded.example_inputs)
    torch.testing.assert_close(out, model(x))


def test_pt2_without_saved_inputs_builds_them_from_metadata(model: Stack, tmp_path: Path) -> None:
    batch = torch.export.Dim("batch")
    exported = torch.export.export(model, (torch.randn(5, 8),), dynamic_shapes=({0: batch},))
    exported.example_inputs = None
    path = tmp_path / "dynamic.pt2"
    torch.export.save(exported, str(path))
    loaded = load_pt2(path)
    assert loaded.dynamic is True
    assert _region_names(loaded) == [BLOCK_NAMES]
    (x,) = loaded.example_inputs
    assert (x.shape, x.dtype) == (torch.Size([5, 8]), torch.float32)
    (out,) = loaded.gm(x)
    torch.testing.assert_close(out, model(x))
    (again,) = load_pt2(path).example_inputs  # seeded: the same inputs on every load
    torch.testing.assert_close(again, x)


def _one_line_error(path: Path, loader: object = load_pt2) -> str:
    assert callable(loader)
    with pytest.raises(FxOracleError) as caught:
        loader(path)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_damaged_pt2_files_raise_one_line(saved: Path, tmp_path: Path) -> None:
    data = saved.read_bytes()
    truncated = tmp_path / "truncated.pt2"
    truncated.write_bytes(data[: len(data) // 2])
    assert "truncated" in _one_line_error(truncated)
    garbage = tmp_path / "garbage.pt2"
    garbage.write_bytes(b"not an archive at all")
    assert "not a .pt2 archive" in _one_line_error(garbage)
    other_zip = tmp_path / "other.pt2"
    with zipfile.ZipFile(other_zip, "w") as z:
        z.writestr("readme.txt", "hello")
    assert "without an exported program" in _one_line_error(other_zip)
    assert "no such file" in _one_line_error(tmp_path / "missing.pt2")


def test_pt2_with_a_damaged_member_raises_one_line(saved: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.pt2"
    with zipfile.ZipFile(saved) as src, zipfile.ZipFile(damaged, "w") as dst:
        for name in src.namelist():
            body = b"{not json" if name.endswith("models/model.json") else src.read(name)
            dst.writestr(name, body)
    assert "cannot load the .pt2" in _one_line_error(damaged)


GM_WITHOUT_META = """
import torch

class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        for _ in range(3):
            x = torch.relu(torch.nn.functional.linear(x, self.w)) + x
        return x.sin()

torch.manual_seed(0)
gm = torch.fx.symbolic_trace(Stack())
example_inputs = (torch.randn(4, 8),)
"""

GM_WITH_META = (
    GM_WITHOUT_META
    + """
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

FakeTensorProp(gm, FakeTensorMode(allow_non_fake_inputs=True)).propagate(*example_inputs)
for node in gm.graph.nodes:
    node.meta["example_value"] = node.meta.pop("val")
"""
)


@pytest.mark.parametrize("source", [GM_WITHOUT_META, GM_WITH_META], ids=["bare", "with_meta"])
def test_graph_module_file_is_keyed(source: str, tmp_path: Path) -> None:
    path = tmp_path / "graph.py"
    path.write_text(source)
    loaded = load_graph_module_file(path)
    assert _region_names(loaded) == [BLOCK_NAMES]
    assert loaded.dynamic is False
    assert loaded.tracker.untracked == {}
    has_val = ["val" in n.meta for n in loaded.gm.graph.nodes]
    assert has_val == [source is GM_WITHOUT_META] * len(has_val)  # filled only when missing
    (x,) = loaded.example_inputs
    w = loaded.gm.get_parameter("w")
    expected = x
    for _ in range(3):
        expected = torch.relu(torch.nn.functional.linear(expected, w)) + expected
    torch.testing.assert_close(loaded.gm(x), expected.sin())


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("example_inputs = ()\n", "defines no `gm`"),
        ("gm = 3\nexample_inputs = ()\n", "`gm` must be a torch.fx.GraphModule, not int"),
        ("raise RuntimeError('boom\\nmore')\n", "raised RuntimeError: boom at import"),
        ("gm = (\n", "syntax error"),
        (GM_WITHOUT_META + "example_inputs = [1]\n", "`example_inputs` must be a tuple"),
        (GM_WITHOUT_META + "example_inputs = ()\n", "1 placeholders but 0 example inputs"),
        (
            GM_WITHOUT_META + "example_inputs = (torch.randn(4, 3),)\n",
            "cannot compute metadata for `gm`",
        ),
    ],
    ids=["no_gm", "not_gm", "raises", "syntax", "list", "count", "wrong_shape"],
)
def test_bad_graph_module_files_raise_one_line(source: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text(source)
    assert expected in _one_line_error(path, load_graph_module_file)


def test_load_any_dispatches_on_suffix_and_content(saved: Path, tmp_path: Path) -> None:
    gm_file = tmp_path / "graph.py"
    gm_file.write_text(GM_WITHOUT_META)
    model_file = tmp_path / "model.py"
    model_file.write_text("import torch\nmodel = torch.sin\nexample_inputs = (torch.ones(2),)\n")
    renamed = tmp_path / "archive.bin"
    renamed.write_bytes(saved.read_bytes())
    assert isinstance(load_any(saved), Capture)
    assert isinstance(load_any(renamed), Capture)  # a zip file, whatever its suffix
    assert isinstance(load_any(gm_file), Capture)
    found = load_any(model_file)
    assert isinstance(found, Model)
    assert found.model is torch.sin
    assert "no such file" in _one_line_error(tmp_path / "nope.py", load_any)
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    assert "syntax error" in _one_line_error(broken, load_any)
