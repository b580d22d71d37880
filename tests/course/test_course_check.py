"""`fxoracle course check`: every exercise calls its shipped answer right and a wrong answer
wrong, naming a wrong fact; bad input is one line and exit 2 (`specs/course.md`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.cli import main
from checker.course.catalogue import EXERCISES, check_file, solution_path
from tests.course.wrong_answers import WRONG

pytestmark = pytest.mark.filterwarnings("ignore")

# the invariants each exercise is about (the traceability test reads them here)
SPEC = {
    "01.1": ("TRK-5",), "01.2": ("TRK-3", "TRK-10"), "01.3": ("TRK-2",),
    "02.1": ("EXP-3", "EXP-6"), "02.2": ("EXP-8", "RPL-25"),
    "03.1": ("RPL-2", "RPL-8", "RPL-13"), "03.2": ("RPL-15",), "03.3": ("RPL-5",),
    "04.1": ("SRT-6",), "04.2": ("SRT-9", "SRT-10"), "04.3": ("SRT-5",),
    "05.1": ("SPL-8", "SPL-11"), "05.2": ("SPL-3", "SPL-9", "SPL-13"), "05.3": ("SPL-10",),
    "06.1": ("CHK-3", "CHK-16"), "06.2": ("CHK-6", "CHK-7"), "06.3": ("CHK-2",),
    "06.4": ("CHK-4", "SPL-9"),
    "07.1": ("SHP-2", "SHP-9"), "07.2": ("SHP-2", "SHP-3", "SHP-5"), "07.3": ("SHP-10", "SHP-12"),
    "08.1": ("DIF-1", "DIF-3"), "08.2": ("DIF-4", "DIF-12"), "08.3": ("DIF-3",),
    "09.1": ("EFF-5", "EFF-6", "SRT-12"), "09.2": ("EFF-5", "SRT-12"),
    "11.1": ("DIF-21", "EFF-1"),
}  # fmt: skip


def test_every_exercise_has_its_invariants_a_solution_and_a_wrong_answer() -> None:
    assert {k: e.ids for k, e in EXERCISES.items()} == SPEC
    assert set(WRONG) == set(EXERCISES)
    assert all(solution_path(k).is_file() for k in EXERCISES)


@pytest.mark.parametrize("ident", list(EXERCISES))
def test_the_shipped_answer_is_right(ident: str) -> None:
    marking = check_file(ident, solution_path(ident))
    assert marking.right, [m for m in marking.marks if not m.right]


@pytest.mark.parametrize("ident", list(EXERCISES))
def test_a_wrong_answer_is_told_wrong_and_why(ident: str, tmp_path: Path) -> None:
    answer = tmp_path / f"answer_{ident.replace('.', '_')}.py"
    answer.write_text(WRONG[ident])
    marking = check_file(ident, answer)
    wrong = [m for m in marking.marks if not m.right]
    assert not marking.right and wrong
    assert all(m.why for m in marking.marks)


def test_cli_exit_codes_json_and_solution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """0 right, 1 wrong (the text says which fact and why), 2 bad input on one line; the
    solution only with --solution."""
    right, wrong = tmp_path / "right.py", tmp_path / "wrong.py"
    right.write_text('EQUAL_KEYS = ["torch.float32/torch.float"]\n')
    wrong.write_text(WRONG["01.1"])
    assert main(["course", "check", "01.1", str(right)]) == 0
    assert "EQUAL_KEYS = " not in capsys.readouterr().out
    assert main(["course", "check", "01.1", str(wrong)]) == 1
    out = capsys.readouterr().out
    assert (
        ": wrong (1 of 4 facts)" in out and "'0.0/-0.0' in EQUAL_KEYS: WRONG: you wrote True" in out
    )
    assert main(["course", "check", "01.1", str(wrong), "--json", "-"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["right"] is False and report["exercise"] == "01.1"
    assert main(["course", "check", "01.1", "--solution"]) == 0
    assert 'EQUAL_KEYS = {"torch.float32/torch.float"}' in capsys.readouterr().out
    assert main(["course", "list"]) == 0 and "09.2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["course", "check", "12.1", "x.py"], "no exercise '12.1'"),
        (["course", "check", "01.1"], "give your answer file"),
        (["course", "check", "01.1", "missing.py"], "missing.py: no such file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_a_missing_or_mistyped_name_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = tmp_path / "a.py"
    answer.write_text("LIVE_SAME_KEY = 'no'\n")
    assert main(["course", "check", "01.2", str(answer)]) == 2
    assert "`LIVE_SAME_KEY` must be True or False" in capsys.readouterr().err
    answer.write_text("EQUAL_KEYS = {'1/1.0'}\n")
    assert main(["course", "check", "01.1", str(answer)]) == 2
    assert "holds '1/1.0'; choose from" in capsys.readouterr().err
