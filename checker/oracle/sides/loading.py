"""Loading the implementation `--against` names, and remembering where it was found (spec
chapter 08, DIF-1, DIF-18; chapter 10, FIL-4).

`--against` is a built-in side (`reference`, `torch`, `torch-simple`), `module:attr` or
`path/to/file.py:attr`; `attr` is an object, or a class instantiated without arguments.

- A module is found as `python -m` finds one: when the working directory holds its top-level
  package or module, that directory is put first on `sys.path`, for the rest of the run (lazy
  imports inside the plug-in find their siblings, and so do the workers, which inherit
  `sys.path`); else it is imported from `sys.path` as it is (installed, `PYTHONPATH`).
- A file, relative or absolute, is imported from its absolute path
  (`importlib.util.spec_from_file_location`) as the module `fxoracle_plugin_<stem>`; its folder
  is not put on `sys.path` (a plug-in of several modules is a package, named `module:attr`).

Whatever fails is `FxOracleError`, one line, exit 2: no such file, not a `.py` file, no `attr`,
anything the plug-in's code raises at import or when constructed. `Against` records where the
plug-in was found, so a repro loads it the same way from any directory (DIF-19).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from enum import StrEnum
from importlib.machinery import PathFinder
from pathlib import Path
from types import ModuleType

from checker.io.user_code import raised_when, user_code
from checker.oracle.protocol import PARTS, parts_of
from checker.oracle.sides.impls import BUILT_IN
from reference.errors import FxOracleError, describe

EXPECTED = f"{', '.join(BUILT_IN)}, module:attr or path/to/file.py:attr"


class Origin(StrEnum):
    """Where `--against` found its implementation."""

    BUILT_IN = "built-in"
    FILE = "file"  # path/to/file.py:attr, imported from the file's absolute path
    WORKING_DIR = "working directory"  # module:attr, its top-level module in the working dir
    SYS_PATH = "sys.path"  # module:attr, importable where fxoracle ran (installed, PYTHONPATH)


@dataclass(frozen=True, slots=True)
class Against:
    """An implementation as `--against` named it (`given`, what reports call it) and where it
    was found: `where` is the file's absolute path (FILE), or the folder holding its top-level
    module (WORKING_DIR, SYS_PATH; "" for a module with no file); `attr` the attribute."""

    given: str
    origin: Origin = Origin.BUILT_IN
    where: str = ""
    attr: str = ""

    @property
    def portable(self) -> str:
        """An `--against` that loads the same implementation from any working directory (a
        file by its absolute path); a WORKING_DIR module also needs `where` on `sys.path`."""
        return f"{self.where}:{self.attr}" if self.origin is Origin.FILE else self.given


@dataclass(frozen=True, slots=True)
class Loaded:
    """The implementation (some of the Protocols of `checker.oracle.protocol`), and where."""

    impl: object
    against: Against


_MISSING = object()


def load_impl(spec: str) -> Loaded:
    """`reference`, `torch`, `torch-simple`, `module:attr` or `path/to/file.py:attr` (an object
    or a class, which is instantiated); `FxOracleError` when it cannot be loaded or implements
    no part (DIF-1, DIF-18)."""
    if spec in BUILT_IN:
        return Loaded(BUILT_IN[spec](), Against(spec))
    source, sep, attr = spec.rpartition(":")
    if not sep or not source or not attr:
        raise FxOracleError(f"--against {spec!r}: expected {EXPECTED}")
    module, against = (_from_file if _names_a_file(source) else _from_module)(spec, source, attr)
    found: object = getattr(module, attr, _MISSING)
    if found is _MISSING:
        raise FxOracleError(f"--against {spec}: AttributeError: {source} has no `{attr}`")
    with user_code(f"--against {spec}: {attr}()", "when constructed"):
        impl = found() if isinstance(found, type) else found
    if not parts_of(impl):
        names = ", ".join(f"{name} ({proto.__name__})" for name, proto in PARTS)
        raise FxOracleError(f"--against {spec}: implements none of {names}")
    return Loaded(impl, against)


def label_of(spec: str) -> str:
    """The name reports give the side under test: `torch` for both torch adapters, else the
    spec as given (`reference` against itself is `reference-copy`, so the two sides never share
    one)."""
    return {"torch": "torch", "torch-simple": "torch", "reference": "reference-copy"}.get(
        spec, spec
    )


def _names_a_file(source: str) -> bool:
    """`source` is a path (a folder separator, `.py`, or an existing file), not a module."""
    return "/" in source or os.sep in source or source.endswith(".py") or Path(source).is_file()


def _from_file(spec: str, text: str, attr: str) -> tuple[ModuleType, Against]:
    """Import the file `text` from its absolute path as `fxoracle_plugin_<stem>` (DIF-18)."""
    path = Path(text)
    if not path.is_file():
        raise FxOracleError(f"--against {spec}: {text}: " + ("not a file" if path.exists()
                                                            else "no such file"))  # fmt: skip
    if path.suffix != ".py":
        raise FxOracleError(f"--against {spec}: {text} is not a Python file (.py)")
    absolute = path.resolve()
    name = "fxoracle_plugin_" + re.sub(r"\W", "_", absolute.stem)
    found = importlib.util.spec_from_file_location(name, absolute)
    assert found is not None and found.loader is not None, f"DIF-18: no loader for {absolute}"
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # as an import does: dataclasses and pickle look modules up there
    try:
        with user_code(f"--against {spec}: {text}", "at import"):  # FIL-4
            found.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)  # as a failed import leaves no module behind
        raise
    return module, Against(spec, Origin.FILE, str(absolute), attr)


def _from_module(spec: str, name: str, attr: str) -> tuple[ModuleType, Against]:
    """Import the module `name`, from the working directory first, as `python -m` does
    (DIF-18)."""
    cwd = os.getcwd()
    top = name.partition(".")[0]
    if _found_in_working_dir(top, cwd):
        sys.path.insert(0, cwd)  # for the rest of the run, as `python -m` does
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        raise FxOracleError(f"--against {spec}: {describe(e)}{_not_found(e, name)}") from e
    except (Exception, SystemExit) as e:  # the plug-in's own code failed: bad input (FIL-4)
        raise FxOracleError(raised_when(f"--against {spec}: {name}", e, "at import")) from e
    folder = _folder_of(sys.modules[top])
    origin = Origin.WORKING_DIR if folder == Path(cwd).resolve() else Origin.SYS_PATH
    return module, Against(spec, origin, "" if folder is None else str(folder), attr)


def _not_found(e: ImportError, name: str) -> str:
    """Where a module `name` that is not there was looked for, "" when what is missing is
    another module (one the plug-in imports)."""
    missing = isinstance(e, ModuleNotFoundError) and e.name is not None
    if not missing or not (name == e.name or name.startswith(f"{e.name}.")):
        return ""
    return " (not in the working directory nor on sys.path; a file is path/to/file.py:attr)"


def _found_in_working_dir(top: str, cwd: str) -> bool:
    """The working directory `cwd` holds the top-level module `top`, not yet imported, and is
    not on `sys.path`."""
    fresh = bool(top) and top not in sys.modules and cwd not in sys.path
    return fresh and PathFinder.find_spec(top, [cwd]) is not None


def _folder_of(module: ModuleType) -> Path | None:
    """The folder holding a top-level module or package (the `sys.path` entry it came from),
    or None for one with no file (built into the interpreter)."""
    locations = list(getattr(module, "__path__", ()))  # a package's folders
    if locations:
        return Path(locations[0]).resolve().parent
    file = getattr(module, "__file__", None)
    return Path(file).resolve().parent if file else None


def plugin_sources(spec: str) -> list[Path]:
    """The files `--against spec` would import, found without running anything: the file of
    `path/to/file.py:attr`, or the module's file (a package: every `.py` file in it), so no
    output of the run is ever written over them (FIL-9). None for a built-in side."""
    source, sep, _ = spec.rpartition(":")
    if spec in BUILT_IN or not sep or not source:
        return []
    if _names_a_file(source):
        return [Path(source)]
    search = [os.getcwd(), *sys.path]
    found = None
    for part in source.split("."):
        found = PathFinder.find_spec(part, search)
        if found is None:
            return []
        search = list(found.submodule_search_locations or [])
    if found is None or found.origin is None:
        return []
    if found.submodule_search_locations:
        return sorted(Path(found.origin).parent.rglob("*.py"))
    return [Path(found.origin)]
