"""A repro of a run with `--device` moves its model and inputs there, as the run moved them
(spec chapter 10, FIL-16; FIL-17 for what moves). On a machine without CUDA the text written for
`cuda:0` is read, and the same text run for `cpu` and `meta`; `tests/cuda` runs one on a GPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from checker.io.device import moving_lines, on_device
from checker.io.model_file import load_model_file, model_from_source
from checker.oracle.compare.divergence import Blame, Divergence, Kind
from checker.oracle.diff.driver import run_diff
from checker.oracle.repro.graph_source import graph_source
from checker.oracle.repro.text import model_repro
from checker.oracle.sides.sides import Component, make_sides
from tests.support.paths import CORPUS

pytestmark = pytest.mark.spec("FIL-16")
MODEL = """import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.table = torch.arange(4.0)  # a plain attribute: it moves too (FIL-17)
    def forward(self, x, pair):
        return self.lin(x) + self.table + pair[0]
model = M()
example_inputs = (torch.randn(2, 4, requires_grad=True), [torch.ones(4)])
"""
DIVERGED = Divergence(Component.DEDUP, Kind.GRAPH, Blame.OTHER, "numbers differ", "torch")


def test_fil16_a_repro_of_a_run_on_the_cpu_moves_there_and_fails_on_its_own(
    tmp_path: Path,
) -> None:
    """B1 against torch with `--device cpu`: the repro carries the mover and its call, needs
    only torch, and fails with AssertionError in a fresh interpreter."""
    model = load_model_file(CORPUS / "b1_float_constants.py")
    report = run_diff([model], "torch", "dedup", repro_dir=tmp_path, device=torch.device("cpu"))
    (repro,) = report.graphs[0].repros
    text = Path(repro).read_text()
    assert "# fxoracle ran this with --device cpu: the model and its example inputs move" in text
    call = "model, example_inputs = _fxoracle_to_device(torch.device('cpu'), model, example_inputs)"
    assert call in text.splitlines()
    imports = {ln.split()[1] for ln in text.splitlines() if ln.startswith(("import ", "from "))}
    assert imports <= {"torch", "__future__", "sys", "typing", "collections.abc",
                       "torch.utils._pytree"}  # fmt: skip
    ran = subprocess.run([sys.executable, repro], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1 and "AssertionError" in ran.stderr, ran.stderr[-2000:]
    again = run_diff([model], "torch", "dedup", repro_dir=tmp_path / "plain")
    assert "_fxoracle_to_device" not in Path(again.graphs[0].repros[0]).read_text()


def test_fil16_a_cuda_run_s_repro_moves_to_that_device() -> None:
    """The text written for `cuda:0`, read on a machine without one."""
    text = model_repro(MODEL, DIVERGED, make_sides("torch", "dedup"), torch.device("cuda", 0))
    lines = text.splitlines()
    assert "# fxoracle ran this with --device cuda:0: the model and its example inputs move " \
           "there as the run moved them" in lines  # fmt: skip
    assert "# (checker/io/device_move.py); it needs that device" in lines
    call = "model, example_inputs = _fxoracle_to_device(torch.device('cuda:0'), model, " \
           "example_inputs)"  # fmt: skip
    assert call in lines
    assert lines.index(call) < lines.index('if __name__ == "__main__":  # torch\'s deduplication '
                                           "changes what the model computes")  # fmt: skip


def test_fil16_the_repro_s_mover_moves_as_the_run_does() -> None:
    """The mover's text, run after the model's source (here for `meta`, a device this machine
    lacks too), moves what `on_device` moves: parameters, plain attributes, nested inputs."""
    namespace: dict[str, object] = {}
    exec(compile(MODEL + moving_lines(torch.device("meta")), "<repro>", "exec"), namespace)
    by_repro = namespace["model"]
    assert isinstance(by_repro, torch.nn.Module)
    inputs = namespace["example_inputs"]
    assert isinstance(inputs, tuple)
    x, (a,) = inputs
    run = on_device(model_from_source("moved", MODEL), torch.device("meta"))
    assert isinstance(run.model, torch.nn.Module)
    for moved, (y, (b,)) in ((by_repro, (x, (a,))), (run.model, run.example_inputs)):
        assert {p.device.type for p in moved.parameters()} == {"meta"}
        assert moved.table.device.type == "meta"
        assert (y.device.type, b.device.type) == ("meta", "meta")
        assert y.requires_grad and y.is_leaf


def test_fil16_a_graph_repro_draws_its_inputs_then_moves_them() -> None:
    gm = torch.fx.symbolic_trace(lambda x, y: x + y)
    text = graph_source(gm, (torch.ones(2, device="meta"), torch.ones(2)))
    assert text is not None
    assert "torch.randn((2, ), generator=_g, dtype=torch.float32).to(torch.device('meta'))" in text
    assert "torch.randn((2, ), generator=_g, dtype=torch.float32), " in text
