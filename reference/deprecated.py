"""Old module paths kept importable for one release, each with a `DeprecationWarning`.

`reference.key`, `reference.outline` and `reference.order` became `reference.track`,
`reference.replace` and `reference.sort` (the names the spec ids and torch use). Importing an
old package warns once and registers its old submodule names as aliases of the new modules, so
`from reference.key.tracker import GraphRegionTracker` still works.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Mapping

MOVED: Mapping[str, Mapping[str, str]] = {
    "reference.key": {
        "keys": "reference.track.keys",
        "tracker": "reference.track.tracker",
        "offline": "reference.track.offline",
        "fast_keys": "reference.fast.keys",
    },
    "reference.outline": {
        "plan": "reference.replace.plan",
        "legality": "reference.replace.legality",
        "contraction": "reference.replace.cycle",
        "replace": "reference.replace.outliner",
        "bodies": "reference.replace.bodies",
        "dead": "reference.replace.dead",
        "outliner": "reference.replace.outliner",
    },
    "reference.order": {"deps": "reference.sort.deps", "sort": "reference.sort.stable"},
}


def moved_message(old: str) -> str:
    """The warning for `old`: its new package, and where any submodule went elsewhere."""
    moves = MOVED[old]
    new = next(iter(moves.values())).rpartition(".")[0]
    elsewhere = [
        f"{old}.{name}: {to}" for name, to in moves.items() if not to.startswith(f"{new}.")
    ]
    return f"{old} is deprecated, use {new}" + "".join(f"; {move}" for move in elsewhere)


def alias_package(old: str) -> None:
    """Warn that `old` moved, and make each of its old submodules an alias of its new module."""
    moves = MOVED[old]
    warnings.warn(moved_message(old), DeprecationWarning, stacklevel=3)
    package = sys.modules[old]
    for name, target in moves.items():
        module = importlib.import_module(target)
        sys.modules[f"{old}.{name}"] = module
        setattr(package, name, module)
