"""Campaigns on several processes and on a Ray cluster find what one process finds (spec chapter
08, DIF-9, DIF-13)."""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from checker.cli import main
from checker.oracle.campaign.findings import Campaign
from checker.oracle.campaign.fuzz import CampaignBar, run_campaign
from checker.oracle.campaign.tasks import diff_random, diff_task, sides_for
from checker.oracle.compare.divergence import Kind
from checker.oracle.compare.run import model_caches_dropped
from checker.oracle.pool.pool import process_pool
from reference.dynamo.capture import capture
from reference.torch_version import TORCH, release
from tests.support.campaigns import finding_of
from tests.support.corpus import CORPUS_DIR, load_model_file
from tests.support.paths import ROOT

pytestmark = pytest.mark.filterwarnings("ignore")

MODELS = 4
# a process started in the background inherits SIGINT ignored; a terminal's is not
AS_IN_A_TERMINAL = """import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from checker.cli import main
sys.exit(main(sys.argv[1:]))"""
RAY_MISSING = "fxoracle fuzz: --ray needs the optional extra: pip install 'fxoracle[cluster]'"


def _findings(out: Path) -> dict[str, object]:
    """The findings file without its timing, repros named by file name and text."""
    data = json.loads(out.read_text())
    del data["elapsed_s"]
    for finding in data["findings"]:
        if finding["repro"] is not None:
            repro = Path(finding["repro"])
            finding["repro"] = (repro.name, repro.read_text())
    return dict(data)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Seed 0, models 0..3, diffed and shrunk in this process (`--workers 1`)."""
    tmp = tmp_path_factory.mktemp("one")
    run_campaign(5.0, 0, tmp / "f.json", max_models=MODELS, repro_dir=tmp / "repros", workers=1)
    return _findings(tmp / "f.json")


@pytest.mark.spec("DIF-13")
def test_dif13_two_workers_find_what_one_finds(
    one_process: dict[str, object], tmp_path: Path
) -> None:
    """The same findings, counts, first models and repros (names and text) as in-process."""
    run_campaign(5.0, 0, tmp_path / "f.json", max_models=MODELS, repro_dir=tmp_path / "repros",
                 workers=2)  # fmt: skip
    assert _findings(tmp_path / "f.json") == one_process
    findings = one_process["findings"]
    assert isinstance(findings, list) and len(findings) >= 5
    assert sum(f["repro"] is not None for f in findings) >= 4  # repros were made, and kept


@pytest.mark.spec("DIF-13")
def test_dif13_a_timed_campaign_records_a_prefix(tmp_path: Path) -> None:
    """With `--minutes`, 2 workers record some k models: exactly models 0..k-1, as one process
    records them with `--max-models k` (a model done early waits for those before it)."""
    run_campaign(0.06, 3, tmp_path / "timed.json", workers=2)
    timed = _findings(tmp_path / "timed.json")
    k = timed["models"]
    assert isinstance(k, int) and k >= 2
    run_campaign(5.0, 3, tmp_path / "prefix.json", max_models=k, workers=1)
    assert timed == _findings(tmp_path / "prefix.json")


@pytest.mark.spec("DIF-9", "DIF-13")
def test_dif13_ctrl_c_stops_the_pool_and_keeps_the_findings(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while 2 workers run:
    exit 130, no traceback, no process left, a valid findings file of the models recorded."""
    out = tmp_path / "f.json"
    argv = [sys.executable, "-c", AS_IN_A_TERMINAL, "fuzz", "--workers", "2", "--minutes", "5",
            "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    try:
        while not (out.exists() and json.loads(out.read_text())["models"] >= 2):
            assert proc.poll() is None and time.monotonic() < deadline, "no model recorded"
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130
        assert "Traceback" not in err and err.rstrip().endswith("fxoracle: interrupted")
        assert json.loads(out.read_text())["models"] >= 2
        assert _group_is_gone(proc.pid)
    finally:
        _kill_group(proc.pid)


def _group_is_gone(pgid: int) -> bool:
    for _ in range(50):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


@pytest.mark.spec("DIF-13")
def test_dif13_ray_without_the_extra_and_no_workers_are_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    out = tmp_path / "f.json"
    assert main(["fuzz", "--ray", "local", "--max-models", "1", "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"fxoracle: error: {RAY_MISSING}\n"
    assert not out.exists()
    assert main(["fuzz", "--workers", "0", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        "fxoracle: error: fxoracle fuzz: argument --workers: '0' is not at least 1\n"
    )
    assert not out.exists()


@pytest.mark.spec("DIF-13")
def test_dif13_a_local_ray_cluster_finds_what_one_process_finds(
    one_process: dict[str, object], tmp_path: Path
) -> None:
    """On a Ray instance started here with 2 CPUs (repros left out: they are the pool's)."""
    pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'fxoracle[cluster]'")
    run_campaign(5.0, 0, tmp_path / "f.json", max_models=MODELS, workers=2, ray="local")
    findings = one_process["findings"]
    assert isinstance(findings, list)
    expected = {**one_process, "findings": [{**f, "repro": None} for f in findings]}
    assert _findings(tmp_path / "f.json") == expected


@pytest.mark.spec("DIF-13")
def test_dif13_a_model_leaves_no_autocast_behind() -> None:
    """torch's split of random_0_4 raises inside the graph's autocast region (a refusal,
    DIF-22), so its `_exit_autocast` never runs: without `torch_modes_kept`, the models diffed
    after it in this process would run under autocast (random_0_19's dedup divergence
    disappeared): it gives the same divergences before and after."""
    assert not torch.is_autocast_enabled("cpu")
    before = {d.signature() for d in diff_task(0, 19, "torch").divergences}
    outcome = diff_task(0, 4, "torch")
    assert any(d.kind is Kind.REFUSAL and d.case for d in outcome.divergences)
    assert not torch.is_autocast_enabled("cpu") and torch.is_grad_enabled()
    assert {d.signature() for d in diff_task(0, 19, "torch").divergences} == before
    if release(TORCH.version) < (2, 14, 0):  # 2.14.1 and 2.15.0 agree on its dedup
        assert "dedup/graph/torch/" in before


@pytest.mark.spec("DIF-9")
def test_dif9_without_a_terminal_the_progress_is_a_line_per_model_then_the_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No bar off a terminal: one line per model recorded (DIF-32), said once, then the
    summary line."""
    found = {"dedup/graph/torch/": finding_of("dedup/graph/torch/")}
    campaign = Campaign(seed=0, against="torch", models=3, by_wrong={"torch": 4}, findings=found)
    with CampaignBar(total=3) as bar:
        bar(campaign, False)
        bar(campaign, True)
    err = capsys.readouterr().err
    assert err.splitlines() == ["fuzz: 3/3 findings=1, fxoracle_bugs=0", campaign.progress()]
    assert "3 models" in err and "wrong: torch 4 | 1 signatures" in err


@pytest.mark.spec("DIF-9")
def test_dif9_on_a_terminal_the_bar_counts_models_findings_and_fxoracle_s_bugs() -> None:
    found = {s: finding_of(s) for s in ("dedup/graph/torch/", "all/oracle-error/unknown/")}
    campaign = Campaign(seed=0, against="torch", models=2, findings=found)
    out = io.StringIO()
    with CampaignBar(total=5, out=out, enabled=True) as bar:
        bar(campaign, False)
        shown = out.getvalue().split("\r")[-1]
        bar(campaign, True)
    assert shown.startswith("fuzz:  40%") and "2/5" in shown and " models/s" in shown
    assert shown.endswith("findings=2, fxoracle_bugs=1]")
    assert out.getvalue().rstrip().endswith(campaign.progress())


def test_dif13_a_diffed_model_leaves_no_process_wide_cache_behind() -> None:
    """fx's source cache and `linecache`, `FakeTensorMode`'s dispatch cache: what diffing a
    model adds to them is gone after it (a campaign's process would otherwise grow without
    bound), and the findings are those of a process that never cleared them."""
    loader = torch.fx.graph_module._loader
    sides = sides_for("torch")
    first = diff_random(0, 3, sides)  # model 3: dynamic shapes
    sources, dispatches = set(loader.eval_cache), set(FakeTensorMode.cache)
    lines = {k for k in linecache.cache if k.startswith("<eval_with_key>")}
    again = diff_random(0, 3, sides)
    assert set(loader.eval_cache) <= sources, "DIF-13: fx sources kept"
    assert set(FakeTensorMode.cache) <= dispatches, "DIF-13: fake dispatch entries kept"
    assert {k for k in linecache.cache if k.startswith("<eval_with_key>")} <= lines
    assert again.divergences == first.divergences
    with model_caches_dropped():
        torch.fx.symbolic_trace(torch.nn.Linear(2, 2))
        assert len(loader.eval_cache) > len(sources), "the check above can see an entry"


def node_keys(path: str) -> list[str]:
    """Every node's key when `path` is captured in this process (a pool worker's task)."""
    info = load_model_file(Path(path))
    c = capture(info.model, info.example_inputs, info.dynamic)
    return [f"{n.name}: {c.tracker.node_to_key.get(n)}" for n in c.gm.graph.nodes]


@pytest.mark.spec("DIF-13", "TRK-2")
def test_dif13_a_pool_worker_keys_a_model_as_this_process_does() -> None:
    """The thread count is a key field (TRK-2): a pool worker must not change it, or a model
    would get other keys under `--workers 2` than under `--workers 1`."""
    path = str(CORPUS_DIR / "t01_single_region_group.py")
    with process_pool(1) as pool:
        theirs = pool.submit(node_keys, path).result()
    assert theirs == node_keys(path)
