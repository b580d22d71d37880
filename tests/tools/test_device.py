"""`--device cpu|cuda|cuda:N` on verify, explain, diff and fuzz (spec chapter 10, FIL-8)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from checker.cli import main
from checker.io.device import device_of, graph_on_device, on_device
from checker.io.model_file import load_model_file, model_from_source
from checker.io.reports import to_json
from checker.oracle.campaign.findings import Campaign
from reference.dynamo.capture import Capture, capture
from reference.errors import FxOracleError, describe, root_cause
from reference.track.offline import track_graph
from tests.support.paths import CORPUS

pytestmark = pytest.mark.spec("FIL-8")
D01 = str(CORPUS / "d01_single_subgraph.py")
FUNCTION_MODELS = sorted(
    p for p in CORPUS.glob("*.py") if "\ndef model(" in p.read_text() and "fake_cuda" not in p.name
)
MODEL = """import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("scale", torch.ones(4))
    def forward(self, x, pair):
        return self.lin(x) * self.scale + pair[0] + pair[1]
model = M()
example_inputs = (torch.randn(2, 4, requires_grad=True), [torch.ones(4), torch.zeros(4)])
"""


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json", "-"])
    return code, json.loads(capsys.readouterr().out)


def test_fil8_device_cpu_on_cpu_inputs_verifies_and_names_the_device(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _json(["verify", D01, "--device", "cpu"], capsys)
    assert code == 0 and report["ok"] is True and report["device"] == "cpu"
    assert main(["verify", D01, "--device", "cpu"]) == 0
    assert capsys.readouterr().out.startswith("fxoracle verify: d01_single_subgraph.py (torch ")
    assert main(["verify", D01]) == 0  # the default: where the inputs live
    assert ", cpu)" in capsys.readouterr().out.splitlines()[0]


def test_fil8_explain_and_diff_name_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    code, lesson = _json(["explain", D01, "--device", "cpu"], capsys)
    assert code == 0 and lesson["device"] == "cpu"
    argv = ["diff", D01, "--against", "reference", "--component", "tracker", "--device", "cpu"]
    code, diff = _json(argv, capsys)
    assert code == 0 and diff["device"] == "cpu" and diff["graph"] == "d01_single_subgraph.py"


def test_fil8_fuzz_names_its_device_and_continues_only_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.json"
    argv = ["fuzz", "--max-models", "1", "--workers", "1", "--out", str(out)]
    assert main([*argv, "--device", "cpu", "--against", "reference"]) == 0
    assert json.loads(out.read_text())["device"] == "cpu"
    other = tmp_path / "g.json"
    other.write_text(to_json(Campaign(0, "reference", side="reference", device="cuda:0")
                             .to_json()))  # as fxoracle writes it (FIL-18)  # fmt: skip
    before = other.read_text()
    assert main(["fuzz", "--max-models", "1", "--out", str(other), "--against", "reference"]) == 2
    err = capsys.readouterr().err
    assert "(cuda:0)" in err and "--device" in err and other.read_text() == before


def test_fil8_the_model_its_parameters_buffers_and_inputs_move() -> None:
    """`meta` stands in for a device this machine lacks: everything the capture reads moves,
    nested inputs included, and `requires_grad` stays."""
    model = model_from_source("moved", MODEL)
    moved = on_device(model, torch.device("meta"))
    assert isinstance(moved.model, torch.nn.Module)
    assert {t.device.type for t in [*moved.model.parameters(), *moved.model.buffers()]} == {"meta"}
    x, (a, b) = moved.example_inputs
    assert (x.device.type, a.device.type, b.device.type) == ("meta", "meta", "meta")
    assert x.requires_grad and x.is_leaf and not a.requires_grad
    assert device_of(moved.example_inputs) == "meta" and device_of(model.example_inputs) == "cpu"
    assert on_device(model, None) is model
    fresh = model_from_source("fresh", MODEL)  # `model`'s module moved to meta, in place
    assert on_device(fresh, torch.device("cpu")).example_inputs[0] is fresh.example_inputs[0]
    shared = torch.ones(2)
    twice = on_device(replace(model, example_inputs=(shared, [shared])), torch.device("meta"))
    assert twice.example_inputs[0] is twice.example_inputs[1][0]  # one tensor stays one
    assert device_of((1, "no tensor")) == "cpu"


def test_fil8_a_cpu_scalar_beside_tensors_elsewhere_names_no_device() -> None:
    """Dynamo lifts a module's float attributes (LayerNorm's `eps`, with `dynamic = True`) as
    0-dim CPU tensors: a model on CUDA is reported on CUDA, as torch mixes such scalars freely;
    a CPU tensor with a dimension still names the CPU (the fake-CUDA corpus's `cpu+cuda:0`)."""
    on, scalar = torch.empty(2, 3, device="meta"), torch.tensor(1e-5)
    assert device_of((on, scalar, [scalar])) == "meta"
    assert device_of((on, torch.ones(1))) == "cpu+meta"
    assert device_of((scalar,)) == "cpu"


def test_fil8_a_loaded_graph_stays_where_it_was_captured() -> None:
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    graph = Capture(gm, track_graph(gm.graph), (torch.ones(2),))
    assert graph_on_device(graph, torch.device("cpu")) is graph
    with pytest.raises(FxOracleError, match="captured on cpu; capture it again on meta"):
        graph_on_device(graph, torch.device("meta"))


def test_fil8_cuda_without_a_cuda_device_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for command in (["verify", D01], ["explain", D01], ["diff", D01, "--against", "torch"],
                    ["fuzz", "--max-models", "1"]):  # fmt: skip
        assert main([*command, "--device", "cuda"]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"fxoracle: error: fxoracle {command[0]}: argument --device: ")
        assert "'cuda': no CUDA device here" in line


def test_fil8_a_cuda_index_past_the_devices_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert main(["verify", D01, "--device", "cuda:7"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith("argument --device: 'cuda:7': this machine has 1 CUDA device(s)")


@pytest.mark.parametrize("spec", ["tpu", "cuda:x", "CUDA", "cuda:", "cpu:0", "", "cuda:-1"])
def test_fil8_a_bad_device_spec_is_one_line(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", D01, "--device", spec]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(f"argument --device: {spec!r} is not cpu, cuda or cuda:N")


BLOCK_MASK_MODEL = """import torch
from torch.nn.attention.flex_attention import create_block_mask


def causal(b, h, q, kv):
    return q >= kv


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.mask = create_block_mask(causal, B=None, H=None, Q_LEN=8, KV_LEN=8, device="cpu")
        self.own = {"masks": [self.mask], "scale": torch.ones(4), "name": "plain", "me": self}


model = M()
example_inputs = (torch.ones(2, 4), model.mask)
"""


@pytest.mark.spec("FIL-17")
def test_fil17_a_block_mask_and_a_module_s_own_tensors_move() -> None:
    """`llama_flex.py`'s case: a BlockMask built on the CPU, held by the module and given as an
    input, moves with it (one BlockMask stays one); so do tensors in a module's attributes."""
    model = model_from_source("masked", BLOCK_MASK_MODEL)
    moved = on_device(model, torch.device("meta"))
    assert moved.model is model.model  # in place, as `to`
    own: dict[str, Any] = vars(moved.model)  # plain attributes, not parameters or buffers
    mask = own["mask"]
    assert type(mask).__name__ == "BlockMask" and mask.kv_num_blocks.device.type == "meta"
    assert mask.q_indices is not None and mask.q_indices.device.type == "meta"
    assert own["own"]["masks"][0] is mask and own["own"]["scale"].device.type == "meta"
    assert own["own"]["name"] == "plain" and own["own"]["me"] is model.model  # met again: once
    assert moved.example_inputs[1] is mask and moved.example_inputs[0].device.type == "meta"
    weight = own["_modules"]["lin"].weight
    assert isinstance(weight, torch.nn.Parameter) and weight.device.type == "meta"


@pytest.mark.spec("FIL-8")
@pytest.mark.parametrize("path", FUNCTION_MODELS, ids=lambda p: p.stem)
def test_fil8_a_corpus_function_model_makes_its_tensors_where_its_inputs_are(path: Path) -> None:
    """`--device cuda` moves a function model's inputs, not the tensors it makes: a corpus file
    that makes one without the inputs' device (`torch.randn(4, 8)` beside a CUDA `x`) ends a CUDA
    corpus diff as bad input (seen on an H200). Captured here with fake CUDA inputs, no such
    file mixes devices; other failures are fake mode's on a build without CUDA."""
    model = load_model_file(path)
    with FakeTensorMode():
        inputs = tuple(_on_fake_cuda(t) for t in model.example_inputs)
    try:
        capture(model.model, inputs, model.dynamic)
    except Exception as e:  # fake mode cannot run every op without CUDA: only a mix fails
        assert not _mixes_devices(e), describe(e)


def _mixes_devices(e: Exception) -> bool:
    """Fake mode's error for tensors on two devices: its own class from torch 2.13
    (`FakeTensorDeviceMismatchError`), a `RuntimeError` with other words before."""
    words = ("found at least two devices", "found two different devices")  # 2.13 on, 2.11/2.12
    return any(w in str(root_cause(e)) for w in words)


def _on_fake_cuda(value: Any) -> Any:
    if not isinstance(value, torch.Tensor):
        return value
    return torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="cuda")
