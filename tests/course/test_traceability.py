"""Every invariant id in specs/ is named by a test, and tests name no unknown id (overview)."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

HEADING = re.compile(r"^### ([A-Z]{3}-\d+) ", re.MULTILINE)
MENTION = re.compile(r"\b([A-Z]{3}-\d+)\b")


def _defined() -> set[str]:
    return {m for p in (ROOT / "specs").glob("*.md") for m in HEADING.findall(p.read_text())}


def _named_by_tests() -> set[str]:
    return {m for p in (ROOT / "tests").rglob("*.py") for m in MENTION.findall(p.read_text())}


def test_every_spec_id_is_tested() -> None:
    untested = sorted(_defined() - _named_by_tests())
    assert untested == [], f"ids no test names: {untested}"


def test_tests_name_only_existing_ids() -> None:
    unknown = sorted(_named_by_tests() - _defined())
    assert unknown == [], f"tests name ids the specs do not define: {unknown}"


def test_ids_are_unique_per_chapter() -> None:
    seen: dict[str, str] = {}
    for p in sorted((ROOT / "specs").glob("*.md")):
        for ident in HEADING.findall(p.read_text()):
            assert ident not in seen, f"{ident} defined in {seen[ident]} and {p.name}"
            seen[ident] = p.name
