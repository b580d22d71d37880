"""The course's reading time, measured (specs/course.md): the words of each stop's learner's
path, everything of a chapter above its `## Reference` heading (prose, code and printed
output alike; HTML comments and this table left out), read at 150 words a minute, plus 10
minutes for the stop's one exercise and 3 for running its worked example. 150 words a minute
is what a careful reader of the first version managed on technical text (22,800 words and 26
exercises took 5.5-7 hours). Chapters 10 and 11 are optional and not in the total.
"""

import re
from pathlib import Path

SPECS = Path(__file__).resolve().parents[1]
STOPS = [
    ("course", "course.md"),
    *((f"{n:02d}", f) for n, f in enumerate(sorted(p.name for p in SPECS.glob("[01][0-9]-*.md")))),
]
WPM, EXERCISE_MIN, RUN_MIN = 150, 10, 3
OPTIONAL = {"10", "11"}
THIS_TABLE = re.compile(r"<!-- example: examples/reading_time.py -->\n```text\n.*?```\n", re.S)


def path_words(name: str) -> int:
    text = (SPECS / name).read_text()
    text = text.split("\n## Reference", 1)[0]
    text = re.sub(r"<!--.*?-->", "", THIS_TABLE.sub("", text), flags=re.S)
    return len(text.split())


print(f"{'stop':<6} {'words':>6} {'read':>5} {'exercise':>9} {'run':>4} {'minutes':>8}")
total_words = total_minutes = 0
for stop, name in STOPS:
    words = path_words(name)
    has_exercise = stop not in ("course", "00", "10")
    extra = (EXERCISE_MIN + RUN_MIN) if has_exercise else 0
    minutes = round(words / WPM) + extra
    note = "  (optional)" if stop in OPTIONAL else ""
    exercise, run = (f"{EXERCISE_MIN}", f"{RUN_MIN}") if has_exercise else ("-", "-")
    print(f"{stop:<6} {words:>6} {round(words / WPM):>5} {exercise:>9} {run:>4} {minutes:>8}{note}")
    if stop not in OPTIONAL:
        total_words += words
        total_minutes += minutes
hours, rest = divmod(total_minutes, 60)
total = f"{'total':<6} {total_words:>6} {'':>5} {'':>9} {'':>4} {total_minutes:>8}"
print(f"{total}  = {hours} h {rest} min")
