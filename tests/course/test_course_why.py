"""The "why" questions of the course are facts `course check` marks (02.1 what goes wrong, 06.1
why CHK-6 holds and whether a zero tolerance would change it, 07.1 whether z3 names your size),
and feedback on a wrong answer shows the learner's fact against the rule, never the right
answer, which only `--solution` prints (`specs/course.md`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.cli import main
from checker.course.catalogue import check_file, solution, solution_path

pytestmark = pytest.mark.filterwarnings("ignore")

# exercise, the fact, the shipped answer's line, a wrong line, text the feedback must not show
WHY = [
    ("02.1", "WHAT_GOES_WRONG", 'WHAT_GOES_WRONG = "misaligned"',
     'WHAT_GOES_WRONG = "nothing"', "misaligned"),
    ("02.1", "WHAT_GOES_WRONG", 'WHAT_GOES_WRONG = "misaligned"',
     'WHAT_GOES_WRONG = "merged"', "misaligned"),
    ("06.1", "CHK6_HOLDS_BECAUSE", 'CHK6_HOLDS_BECAUSE = "rounding"',
     'CHK6_HOLDS_BECAUSE = "tolerance"', "rounding"),
    ("06.1", "ZERO_TOLERANCE_CATCHES_IT", "ZERO_TOLERANCE_CATCHES_IT = False",
     "ZERO_TOLERANCE_CATCHES_IT = True", "False"),
    ("07.1", "Z3_SAME_SIZE", "Z3_SAME_SIZE = True", "Z3_SAME_SIZE = False", "s0 = 1"),
]  # fmt: skip


def _answer(tmp_path: Path, ident: str, old: str, new: str) -> Path:
    text = solution(ident)
    assert old in text, f"the shipped answer of {ident} states {old}"
    path = tmp_path / f"answer_{ident.replace('.', '_')}.py"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(("ident", "fact", "right", "wrong", "hidden"), WHY)
def test_a_why_fact_is_marked_right_and_wrong(
    ident: str, fact: str, right: str, wrong: str, hidden: str, tmp_path: Path
) -> None:
    marks = {m.fact: m for m in check_file(ident, solution_path(ident)).marks}
    assert marks[fact].right, marks[fact]
    marking = check_file(ident, _answer(tmp_path, ident, right, wrong))
    (told,) = [m for m in marking.marks if m.fact == fact]
    assert not marking.right and not told.right
    assert told.why.startswith("you wrote ") and hidden not in told.why, told.why


def test_01_1_wrong_feedback_shows_the_rule_not_the_keys(tmp_path: Path) -> None:
    """01.1 used to print both keys of every pair: the answer. A wrong pair now gets the rule
    (type and repr, TRK-5) and the two constants to apply it to; a right one its keys."""
    path = tmp_path / "a.py"
    path.write_text('EQUAL_KEYS = {"0.0/-0.0", "torch.float32/torch.float"}\n')
    marks = {m.fact: m for m in check_file("01.1", path).marks}
    wrong = marks["'0.0/-0.0' in EQUAL_KEYS"]
    assert not wrong.right and "TRK-5" in wrong.why and "Const(" not in wrong.why
    assert "their keys are Const(" in marks["'1/True' in EQUAL_KEYS"].why


def test_02_1_wrong_feedback_does_not_name_the_kept_candidate(tmp_path: Path) -> None:
    path = _answer(tmp_path, "02.1", '("cos", "tanh")', '("cos", "cos_1")')
    marks = {m.fact: m for m in check_file("02.1", path).marks}
    told = marks["STEP_2_IF_REFUSERS_KEPT_THEIR_CANDIDATE"]
    assert not told.right and "tanh" not in told.why.removeprefix("you wrote ('cos', 'cos_1')")


def test_solution_prints_the_why_answers(capsys: pytest.CaptureFixture[str]) -> None:
    for ident, _, right, _, _ in WHY:
        assert main(["course", "check", ident, "--solution"]) == 0
        assert right in capsys.readouterr().out


def test_a_choice_outside_the_list_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _answer(tmp_path, "06.1", '"rounding"', '"luck"')
    assert main(["course", "check", "06.1", str(path)]) == 2
    err = capsys.readouterr().err
    assert "`CHK6_HOLDS_BECAUSE` is 'luck'; choose one of 'tolerance'" in err
    assert err.count("\n") == 1
