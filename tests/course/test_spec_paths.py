"""Every file and module the specs, the README and the code's docstrings name exists: a move
that forgets a reference fails here (overview, "Layout")."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from tests.support.paths import ROOT

PATH = re.compile(r"`((?:reference|checker|tests|specs)/[\w/.-]*?)(?:::\w+)?`")
MODULE = re.compile(r"`((?:reference|checker)(?:\.\w+)+)`")


def documents() -> list[Path]:
    texts = [*sorted((ROOT / "specs").glob("*.md")), ROOT / "README.md"]
    code = [p for pkg in ("reference", "checker") for p in sorted((ROOT / pkg).rglob("*.py"))]
    return texts + code


def _module_exists(dotted: str) -> bool:
    """`a.b.c` names a module, or an attribute (chain) of the longest module prefix."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        path = ROOT.joinpath(*parts[:k])
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            found: object = importlib.import_module(".".join(parts[:k]))
            for name in parts[k:]:
                if not hasattr(found, name):
                    return False
                found = getattr(found, name)
            return True
    return False


def test_named_paths_exist() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}: {m}"
        for doc in documents()
        for m in PATH.findall(doc.read_text())
        if not (ROOT / m.rstrip("/")).exists() and "*" not in m
    ]
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def test_named_modules_exist() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}: {m}"
        for doc in documents()
        for m in MODULE.findall(doc.read_text())
        if not _module_exists(m)
    ]
    assert not missing, "modules that do not exist:\n" + "\n".join(missing)


def test_the_module_check_sees_a_missing_module() -> None:
    assert _module_exists("reference.pipeline.deduplicate")
    assert not _module_exists("reference.dedup")
    assert not _module_exists("reference.pipeline.no_such_function")


def test_the_overview_table_names_every_module_of_the_reference() -> None:
    """The chapter table of `specs/00-overview.md` lists each module under the chapters' folders
    (a folder named whole, like `reference/split/`, counts for its modules)."""
    table = (ROOT / "specs/00-overview.md").read_text().splitlines()
    named = {m for line in table if line.startswith("| [") for m in PATH.findall(line)}
    folders = ("track", "expand", "replace", "sort", "split", "fast", "effects", "dynamo")
    modules = [p for f in folders for p in sorted((ROOT / "reference" / f).glob("[!_]*.py"))]
    missing = [
        str(p.relative_to(ROOT))
        for p in modules
        if str(p.relative_to(ROOT)) not in named and f"{p.parent.relative_to(ROOT)}/" not in named
    ]
    assert modules and not missing, "modules the chapter table omits:\n" + "\n".join(missing)
