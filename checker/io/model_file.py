"""Model files: a user's model in, as a value the tools capture (README, "A model file").

A model file is a Python file that defines `model` (an `nn.Module` or a function), a tuple
`example_inputs` and optionally `dynamic = True`. `load_model_file(path)` runs it as an import would
(read as Python reads it; what it raises is bad input, FIL-4);
`model_from_source(name, source)` does the same for a model the oracle generated or shrank in
memory, so no temporary file is ever written. Either gives a `Model` that keeps its source, so a
repro can be written from it.

Each run is a module of its own (FIL-15): its name carries a digest of its file name and text, so
a name never stands for two texts in one process (Dynamo caches the module it finds under a name
for good), and its loader gives the text to `inspect`, so torch finds the source of a model built
in memory as it finds a file's.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import os
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.io.user_code import existing, read_source, shown_name, user_code
from reference.errors import FxOracleError


@dataclass(frozen=True, slots=True, eq=False)
class Model:
    """A model, its example inputs, whether to capture it with dynamic shapes, and its source."""

    name: str
    model: Callable[..., Any]
    example_inputs: tuple[Any, ...]
    dynamic: bool
    source: str


def load_model_file(path: str | Path, name: str | None = None) -> Model:
    """Run a model file and read `model`, `example_inputs` and optional `dynamic`; the model is
    called `name` (default: the file's name)."""
    p = Path(path)
    loaded = load_namespace(p)
    return _model_of(name or shown_name(p), loaded.values, loaded.source, str(p))


@dataclass(frozen=True, slots=True)
class Namespace:
    """What a Python file defines, run as the module `module` (registered in `sys.modules`)."""

    module: str
    values: Mapping[str, Any]
    source: str


def load_namespace(path: str | Path) -> Namespace:
    """Run any Python file of a user's as `load_model_file` runs a model file (FIL-4) and keep
    all it defines: a course answer file (`fxoracle course check`)."""
    p = existing(path)
    source = read_source(p)
    module = _run(p.stem, source, str(p))
    return Namespace(module.__name__, module.__dict__, source)


def model_names(paths: Sequence[str | Path]) -> list[str]:
    """A report name per model file, unique among `paths` (DIF-15): the file's name, or as
    many folders above it as tell it from the others (`a/model.py`, `b/model.py`)."""
    parts = [[shown_name(Path(q)) for q in Path(os.path.realpath(p)).parts[1:]] for p in paths]
    names = []
    for mine in parts:
        k = 1
        while k < len(mine) and any(o != mine and o[-k:] == mine[-k:] for o in parts):
            k += 1
        names.append("/".join(mine[-k:]))
    return names


def model_from_source(name: str, source: str) -> Model:
    """The model a model file with text `source` defines, without writing a file: the text is
    compiled under the file name `<name>` (Dynamo keys call sites by file and line)."""
    return _model_of(name, _run(name, source, f"<{name}>").__dict__, source, f"<{name}>")


@contextmanager
def model_tried(name: str, source: str) -> Iterator[Model]:
    """`model_from_source(name, source)` for the block, its module then dropped from
    `sys.modules`: a shrinker tries hundreds of texts, each a module of its own (FIL-15)."""
    module = _module_name(name, source, f"<{name}>")
    try:
        yield model_from_source(name, source)
    finally:
        sys.modules.pop(module, None)


def _run(stem: str, source: str, filename: str) -> types.ModuleType:
    """Run the text as the module `fxoracle_model_<stem>_<digest>`, registered in `sys.modules`
    as an import would: torch looks a function's module up there (eager `torch.cond` compiles
    its branches). Its `__name__` is never `__main__`, so a repro's main block does not run."""
    name = _module_name(stem, source, filename)
    spec = importlib.util.spec_from_loader(name, _Text(source), origin=filename)
    assert spec is not None  # a loader was given
    module = importlib.util.module_from_spec(spec)
    module.__file__ = filename
    sys.modules[name] = module
    with user_code(filename, "at import"):  # FIL-4: SystemExit included
        exec(compile(source, filename, "exec"), module.__dict__)  # what runpy and import do
    return module


@dataclass(frozen=True, slots=True)
class _Text(importlib.abc.InspectLoader):
    """The loader of a module run from its text: `inspect.getsourcefile` finds the source of
    its functions through it (FIL-15). torch 2.11 and 2.12 otherwise call a function with no
    source file a builtin and trace it from a wrapper frame, reaching its globals through the
    module's name."""

    text: str

    def get_source(self, fullname: str) -> str:
        return self.text


def _module_name(stem: str, source: str, filename: str) -> str:
    """`fxoracle_model_<stem>_<digest>`: one name per file name and text (FIL-15)."""
    text = f"{filename}\0{source}".encode(errors="surrogatepass")  # a non-UTF-8 file name
    digest = hashlib.sha256(text).hexdigest()[:12]
    return "fxoracle_model_" + re.sub(r"\W", "_", stem) + "_" + digest


def _model_of(name: str, namespace: Mapping[str, Any], source: str, where: str) -> Model:
    for key in ("model", "example_inputs"):
        if key not in namespace:
            raise FxOracleError(f"{where}: defines no `{key}`")
    if not callable(namespace["model"]):
        raise FxOracleError(f"{where}: `model` is not callable")
    inputs = namespace["example_inputs"]
    if not isinstance(inputs, tuple):
        raise FxOracleError(
            f"{where}: `example_inputs` must be a tuple, not {type(inputs).__name__}"
        )
    dynamic = namespace.get("dynamic", False)
    if not isinstance(dynamic, bool):  # FIL-5: `dynamic = "no"` is not False
        raise FxOracleError(f"{where}: `dynamic` must be True or False, not {dynamic!r}")
    return Model(name, namespace["model"], inputs, dynamic, source)
