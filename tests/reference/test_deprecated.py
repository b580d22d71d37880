"""The old module paths (`reference.key`, `reference.outline`, `reference.order`) still import,
warn once, and name the very modules of the new paths (README's public surface, issue 33)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reference.deprecated import MOVED, moved_message

_PROBE = """
import importlib, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    old = importlib.import_module({old!r})
    new = importlib.import_module({new!r})
print(old is new, [str(w.message) for w in caught if w.category is DeprecationWarning])
"""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (f"{package}.{name}", target)
        for package, moves in MOVED.items()
        for name, target in moves.items()
    ],
)
def test_an_old_module_path_is_the_new_module_with_a_warning(old: str, new: str) -> None:
    probe = _PROBE.format(old=old, new=new)
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    package = old.rpartition(".")[0]
    renamed = next(iter(MOVED[package].values())).rpartition(".")[0]  # the package's new name
    assert run.stdout.strip() == f"True [{moved_message(package)!r}]"
    assert moved_message(package).startswith(f"{package} is deprecated, use {renamed}")


def test_the_key_warning_names_where_fast_keys_moved() -> None:
    """`reference.key.fast_keys` went to `reference.fast`, not `reference.track`."""
    expected = "reference.key is deprecated, use reference.track; "
    assert (
        moved_message("reference.key") == expected + "reference.key.fast_keys: reference.fast.keys"
    )
    assert moved_message("reference.order") == "reference.order is deprecated, use reference.sort"
