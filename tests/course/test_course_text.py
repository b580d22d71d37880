"""The course's text (`specs/course.md`): the glossary of chapter 00 names every id prefix the
specs use, each chapter's learner's path ends in one exercise that `fxoracle course check`
knows, and every exercise is stated in its chapter."""

from __future__ import annotations

import re

from checker.course.catalogue import EXERCISES
from tests.support.paths import SPECS

INVARIANT = re.compile(r"^### ([A-Z]{3})-\d+ ", re.MULTILINE)
SCENARIO = re.compile(r"\b([A-Z])\d{1,2}\b")
REFERENCE = "\n## Reference (not part of the course)\n"
CHAPTERS = sorted(p for p in SPECS.glob("[01][0-9]-*.md") if p.name[:2] not in ("00", "10"))


def _glossary() -> str:
    text = (SPECS / "00-overview.md").read_text()
    return text[text.index("## Glossary") : text.index(REFERENCE)]


def test_the_glossary_names_every_id_prefix_the_specs_use() -> None:
    texts = [p.read_text() for p in SPECS.glob("*.md")]
    prefixes = {m for t in texts for m in INVARIANT.findall(t)}
    prefixes |= {m for t in texts for m in SCENARIO.findall(t)}
    glossary = _glossary()
    missing = sorted(p for p in prefixes if f"| `{p}` |" not in glossary)
    assert missing == [], f"id prefixes the glossary of chapter 00 does not explain: {missing}"


def test_each_chapter_has_one_exercise_on_the_learners_path() -> None:
    """The path (above the Reference heading) states exactly one exercise, of its own chapter,
    with the command that checks it."""
    for chapter in CHAPTERS:
        text = chapter.read_text()
        assert text.count(REFERENCE) == 1, chapter.name
        path = text.split(REFERENCE)[0]
        stated = re.findall(r"\*\*(\d\d\.\d)\*\*", path)
        assert len(stated) == 1 and stated[0][:2] == chapter.name[:2], (chapter.name, stated)
        assert f"fxoracle course check {stated[0]} answer.py" in path, chapter.name


def test_every_exercise_is_stated_in_its_chapter() -> None:
    stated = {
        m: chapter.name
        for chapter in CHAPTERS
        for m in re.findall(r"\*\*(\d\d\.\d)\*\*", chapter.read_text())
    }
    assert set(stated) == set(EXERCISES)
    assert all(stated[e][:2] == e[:2] for e in EXERCISES)
