"""Random draws (spec chapter 08, DIF-6, DIF-29; chapter 09, EFF-4): random models and the
corpus draw, a pass that reorders draws is blamed on both, with a repro that seeds every
generator, and `fxoracle bench` times how long `--random` takes to blame each planted bug."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.bench import detect
from checker.io.model_file import load_model_file
from checker.oracle.campaign.randmodels import DRAWS, MODEL_DRAWS, random_model, random_spec
from checker.oracle.compare.divergence import Blame
from checker.oracle.diff.driver import run_diff
from tests.support.corpus import CORPUS_DIR
from tests.support.repros import fails_from_elsewhere

REORDERS = "checker.oracle.plugins.planted:ReordersDraws"
DRAWS_FILE = CORPUS_DIR / "own_draws.py"


@pytest.mark.spec("DIF-6")
def test_dif6_random_models_draw_among_views_updates_and_switches() -> None:
    """Of seed 0's first 200 models, every kind of draw appears, in blocks and between calls,
    and models that draw also hold views, in-place updates and grad-mode or autocast blocks
    (the `draws` family's models, and half of the `dynamic` family's)."""
    specs = [random_spec(0, i) for i in range(200)]
    drawing = [s for s in specs if s.draw or any(st in DRAWS for st in s.body)]
    assert {st for s in specs for st in s.body if st in DRAWS} == set(DRAWS)
    assert {s.draw for s in specs} == set(MODEL_DRAWS)
    assert any(s.view for s in drawing)  # a view of a graph input, passed to calls
    assert any(any("_(" in st and st not in DRAWS for st in s.body) for s in drawing)
    contexts = {c.context.split("(")[0] for s in drawing for c in s.calls}
    assert {"torch.no_grad", "torch.autocast"} <= contexts
    assert len(drawing) >= len(specs) // 7  # the `draws` family's, at least


@pytest.mark.spec("DIF-6", "DIF-29")
def test_dif29_reordered_draws_are_blamed_on_the_corpus_with_a_seeded_repro(
    tmp_path: Path,
) -> None:
    """`ReordersDraws` defers draws and takes the latest first: its graph computes other
    numbers on `own_draws.py`, blamed with the cause and a repro that seeds every generator and
    fails standalone from another directory; the honest example agrees."""
    model = load_model_file(DRAWS_FILE)
    report = run_diff([model], REORDERS, "dedup", repro_dir=tmp_path / "r")
    (graph,) = report.graphs
    (d,) = graph.divergences
    assert d.blame is Blame.OTHER and "numbers differ" in d.detail
    assert "cause: random draws reordered" in d.detail
    (repro,) = graph.repros
    assert "torch.manual_seed(0)" in Path(repro).read_text()
    assert "ReordersDraws" in fails_from_elsewhere(repro, tmp_path / "elsewhere")
    example = run_diff([model], "checker.oracle.plugins.example:Example", "dedup")
    assert not example.fails


@pytest.mark.spec("DIF-29")
def test_dif29_random_models_blame_reordered_draws() -> None:
    """Seed 0's model 5 holds the `draws` family: twin calls, each drawing numbers that depend
    on no value (the sort may swap them), and a draw before the first call."""
    report = run_diff([random_model(0, 5)], REORDERS, "dedup")
    assert [d.blame for g in report.graphs for d in g.divergences] == [Blame.OTHER]


@pytest.mark.spec("DIF-29")
def test_dif29_bench_times_the_first_blame_of_each_planted_bug() -> None:
    """The bench's row for one planted bug, on two random models and two workers: blamed on
    `random_0_0` (the `constants` family), after a measured time; not on one model that does
    not show it."""
    row = detect.detect("MergesConstants", models=2)
    assert row.model == "random_0_0" and row.models in (1, 2) and row.seconds > 0
    missed = detect.detect("ReordersDraws", models=1)
    assert (missed.model, missed.models) == ("", 1)
    text = detect.run((0,), ("ReordersDraws",), models=1)
    assert text.splitlines()[1].split()[:3] == ["ReordersDraws", "0", "1"]
    assert "none of 1 models" in text and text.endswith("late: ReordersDraws (seed 0)\n")
