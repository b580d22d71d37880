"""DIF-14: `fxoracle diff --workers N` gives the report one process gives, in the same order;
bad input stops it as it stops one process. DIF-33: on CUDA each model runs in a fresh process."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import ParamSpec, TypeVar

import pytest
import torch

from checker.cli import main
from checker.oracle.diff.report import GraphDiff
from checker.oracle.diff.workers import (
    DiffArgs,
    ModelRef,
    _diff_here_while_queued,
    diff_ref,
    isolates,
    model_refs,
    run_diff_pool,
)
from checker.oracle.pool.pool import Pool
from reference.errors import FxOracleError
from tests.support.paths import CORPUS

P = ParamSpec("P")
T = TypeVar("T")
FILES = [str(CORPUS / "b2_targets.py"), str(CORPUS / "t01_single_region_group.py")]


def _report(tmp_path: Path, workers: int) -> dict[str, object]:
    out = tmp_path / f"diff-{workers}.json"
    argv = ["diff", *FILES, "--random", "2", "--against", "torch", "--component", "dedup",
            "--json", str(out), "--workers", str(workers)]  # fmt: skip
    assert main(argv) == 1  # torch's B2
    data: dict[str, object] = json.loads(out.read_text())
    return data


def test_dif14_two_workers_give_the_one_process_report(tmp_path: Path) -> None:
    one, two = _report(tmp_path, 1), _report(tmp_path, 2)
    assert two == one, "DIF-14: the report depends on the worker count"
    graphs = one["graphs"]
    assert isinstance(graphs, list)
    assert [g["graph"] for g in graphs] == ["b2_targets.py", "t01_single_region_group.py",
                                            "random_0_0", "random_0_1"]  # fmt: skip


def test_dif14_bad_input_before_any_worker_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope.py")
    assert main(["diff", missing, "--against", "torch", "--workers", "2"]) == 2
    assert main(["diff", *FILES, "--against", "torch", "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "--workers" in err and "Traceback" not in err
    with pytest.raises(FxOracleError, match="2 or more"):
        run_diff_pool(model_refs(FILES, 0, 0), DiffArgs("torch"), 1)


def test_dif14_a_file_that_fails_in_a_worker_is_bad_input(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("model = None\nraise RuntimeError('boom')\n")
    refs = [ModelRef(FILES[1]), ModelRef(str(broken))]
    with pytest.raises(FxOracleError, match="boom"):
        run_diff_pool(refs, DiffArgs("torch", "dedup"), 2)


def test_dif14_this_process_diffs_the_models_still_queued() -> None:
    """A model a pool process has taken stays there; every queued one is diffed here, in
    place, with the result a worker would give."""
    refs = [ModelRef(None, 0, i) for i in range(3)]
    args = DiffArgs("torch", "dedup")
    pool = Pool[GraphDiff](Queue(), steals=True)
    for k, ref in enumerate(refs):
        pool.submit(k, diff_ref, ref, args)
    taken = pool.futures[0]
    assert taken.set_running_or_notify_cancel()  # as a pool process does when it starts one
    here = _diff_here_while_queued(pool, None, threading.Event())
    assert here == {1, 2} and pool.futures[0] is taken and not taken.done()
    assert [pool.futures[k].result() for k in (1, 2)] == [diff_ref(refs[k], args) for k in (1, 2)]


class Queue(Executor):
    """An executor whose tasks stay queued: no worker ever takes one."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        return Future()


PID_MODEL = """import os
from pathlib import Path

import torch

Path(__file__).with_suffix(".pid").write_text(str(os.getpid()))


def model(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) + torch.sin(x + 1)


example_inputs = (torch.ones(3),)
"""


@pytest.mark.spec("DIF-33")
@pytest.mark.parametrize("workers", [1, 2])
def test_dif33_isolated_models_each_run_in_a_fresh_process_of_their_own(
    tmp_path: Path, workers: int
) -> None:
    """Each model is loaded and diffed in a process no other model ran in, never this one;
    the report is the one a single process gives."""
    files = [tmp_path / f"m{k}.py" for k in range(3)]
    for f in files:
        f.write_text(PID_MODEL)
    refs = model_refs([str(f) for f in files], 0, 0)
    args = DiffArgs("torch", "dedup")
    isolated = run_diff_pool(refs, args, workers, isolated=True)
    pids = {f.with_suffix(".pid").read_text() for f in files}
    assert len(pids) == 3 and str(os.getpid()) not in pids
    assert isolated.graphs == tuple(diff_ref(ref, args) for ref in refs)


@pytest.mark.spec("DIF-33")
def test_dif33_only_several_models_on_cuda_are_isolated() -> None:
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    assert isolates(cuda, 2) and isolates(torch.device("cuda:1"), 5)
    assert not isolates(cuda, 1) and not isolates(cpu, 3) and not isolates(None, 3)
