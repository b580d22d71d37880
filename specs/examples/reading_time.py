"""The course's reading time, measured (specs/course.md): the words of each stop's learner's
path, everything of a chapter above its `## Reference` heading (prose, code and printed
output alike; HTML comments and this table left out), plus the words of the tool output the
stop's "run" column asks the learner to read and the chapter does not print already (each
`fxoracle` command there, run), read at 150 words a minute; plus 10 minutes for the stop's one
exercise and 3 for running its example. 150 words a minute is what a careful reader of the
first version managed on technical text (22,800 words and 26 exercises took 5.5-7 hours).
Chapters 10 and 11 are optional and not in the total.
"""

import contextlib
import io
import re
import shlex
from pathlib import Path

from checker.cli import main
from reference.torch_version import TORCH

SPECS = Path(__file__).resolve().parents[1]
STOPS = [
    ("course", "course.md"),
    *((f"{n:02d}", f) for n, f in enumerate(sorted(p.name for p in SPECS.glob("[01][0-9]-*.md")))),
]
WPM, EXERCISE_MIN, RUN_MIN = 150, 10, 3
OPTIONAL = {"10", "11"}
THIS_TABLE = re.compile(r"<!-- example: examples/reading_time.py -->\n```text\n.*?```\n", re.S)
ROW = re.compile(r"^\| (\d+) \| .*? \| (.*) \|$", re.M)
FXORACLE = re.compile(r"`\.venv/bin/fxoracle ([^`]*)`")


def learners_path(name: str) -> str:
    text = (SPECS / name).read_text()
    return text.split("\n## Reference", 1)[0]


def path_words(name: str) -> int:
    text = re.sub(r"<!--.*?-->", "", THIS_TABLE.sub("", learners_path(name)), flags=re.S)
    return len(text.split())


def printed(command: str) -> str:
    """What `fxoracle <command>` prints, run from the repository root, the version as the
    chapters write it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.chdir(SPECS.parent):
        main(shlex.split(command))
    return out.getvalue().replace(TORCH.label, "torch <version>")


def output_words(stop: str, chapter: str) -> int:
    """The words of the stop's `fxoracle` commands whose output the chapter does not show."""
    runs = {f"{int(m[1]):02d}": m[2] for m in ROW.finditer((SPECS / "course.md").read_text())}
    shown = learners_path(chapter)
    texts = [printed(c) for c in FXORACLE.findall(runs.get(stop, ""))]
    return sum(len(t.split()) for t in texts if t.strip() not in shown)


HEAD = (("words", 6), ("output", 7), ("read", 5), ("exercise", 9), ("run", 4), ("minutes", 8))
print(f"{'stop':<6} " + " ".join(f"{h:>{w}}" for h, w in HEAD))
total_words = total_output = total_minutes = 0
for stop, name in STOPS:
    words, output = path_words(name), output_words(stop, name)
    has_exercise = stop not in ("course", "00", "10")
    extra = (EXERCISE_MIN + RUN_MIN) if has_exercise else 0
    read = round((words + output) / WPM)
    note = "  (optional)" if stop in OPTIONAL else ""
    exercise, run = (f"{EXERCISE_MIN}", f"{RUN_MIN}") if has_exercise else ("-", "-")
    row = f"{stop:<6} {words:>6} {output:>7} {read:>5} {exercise:>9} {run:>4} {read + extra:>8}"
    print(row + note)
    if stop not in OPTIONAL:
        total_words, total_output = total_words + words, total_output + output
        total_minutes += read + extra
hours, rest = divmod(total_minutes, 60)
blank = " " * (5 + 1 + 9 + 1 + 4)
total = f"{'total':<6} {total_words:>6} {total_output:>7} {blank} {total_minutes:>8}"
print(f"{total}  = {hours} h {rest} min")
