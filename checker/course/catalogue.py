"""Every exercise of the course by id, and the text and JSON of a check (`fxoracle course`).

`check_file("02.1", path)` runs the learner's answer file and marks it (`checker.course.marking`);
`solution("02.1")` is the shipped answer file's text, which the command line prints only when
asked (`--solution`).
"""

from __future__ import annotations

from pathlib import Path

from checker.course import ex_01_03, ex_04_05, ex_06_07, ex_08_09, ex_11
from checker.course.marking import Exercise, Marking, read_answer
from checker.io.out_paths import marked
from checker.io.reports import plural
from checker.io.user_code import read_source
from reference.errors import FxOracleError

EXERCISES: dict[str, Exercise] = {
    e.ident: e
    for e in (
        *ex_01_03.EXERCISES,
        *ex_04_05.EXERCISES,
        *ex_06_07.EXERCISES,
        *ex_08_09.EXERCISES,
        *ex_11.EXERCISES,
    )
}
SOLUTIONS = Path(__file__).resolve().parent / "solutions"


def exercise(ident: str) -> Exercise:
    """The exercise `CHAPTER.N`; bad input names the ones there are."""
    if ident not in EXERCISES:
        raise FxOracleError(f"no exercise {ident!r}; there are {', '.join(EXERCISES)}")
    return EXERCISES[ident]


def solution_path(ident: str) -> Path:
    chapter, number = exercise(ident).ident.split(".")
    return SOLUTIONS / f"e{chapter}_{number}.py"


def solution(ident: str) -> str:
    """The shipped answer file of `ident`, with its reasoning in the docstring."""
    return read_source(solution_path(ident))


def check_file(ident: str, path: Path) -> Marking:
    """Run the answer file and mark it against what fxoracle's code computes."""
    return exercise(ident).check(read_answer(path))


def render_text(ident: str, path: Path, marking: Marking) -> str:
    """`fxoracle course check 01.1 a.py: wrong (1 of 4 facts)`, then one line per fact."""
    wrong = sum(not m.right for m in marking.marks)
    head = "right" if marking.right else f"wrong ({wrong} of {plural(len(marking.marks), 'fact')})"
    lines = [f"fxoracle course check {ident} {path}: {head}"]
    lines += [f"  {m.fact}: {'right' if m.right else 'WRONG'}: {m.why}" for m in marking.marks]
    if not marking.right:
        lines.append(f"  (the shipped answer: fxoracle course check {ident} --solution)")
    return "\n".join(lines) + "\n"


def to_json(ident: str, path: Path, marking: Marking) -> dict[str, object]:
    return marked(
        "course",
        {
            "exercise": ident,
            "file": str(path),
            "right": marking.right,
            "facts": [{"fact": m.fact, "right": m.right, "why": m.why} for m in marking.marks],
        },
    )


def listing() -> str:
    """Every exercise: its id, the invariants it is about, what its answer file defines."""
    lines = []
    for e in EXERCISES.values():
        asks = e.asks.replace("\n", "; ")
        lines.append(f"{e.ident}  ({', '.join(e.ids)})  {asks}")
    return "\n".join(lines) + "\n"
