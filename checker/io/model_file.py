"""Model files: a user's model in, as a value the tools capture (README, "A model file").

A model file is a Python file that defines `model` (an `nn.Module` or a function), a tuple
`example_inputs` and optionally `dynamic = True`. `load_model_file(path)` runs it with `runpy`;
`model_from_source(name, source)` does the same for a model the oracle generated or shrank in
memory, so no temporary file is ever written. Either gives a `Model` that keeps its source, so a
repro can be written from it. This module touches torch objects, so `Any` appears where they
cross its edge.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reference.errors import FxOracleError, describe


@dataclass(frozen=True, slots=True, eq=False)
class Model:
    """A model, its example inputs, whether to capture it with dynamic shapes, and its source."""

    name: str
    model: Callable[..., Any]
    example_inputs: tuple[Any, ...]
    dynamic: bool
    source: str


def load_model_file(path: str | Path) -> Model:
    """Run a model file and read `model`, `example_inputs` and optional `dynamic`."""
    p = Path(path)
    if not p.is_file():
        raise FxOracleError(f"{p}: no such file")
    try:
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise FxOracleError(f"{p}: cannot read: {describe(e)}") from e
    return _model_of(p.name, _run(p.stem, source, str(p)), source, str(p))


def model_from_source(name: str, source: str) -> Model:
    """The model a model file with text `source` defines, without writing a file: the text is
    compiled under the file name `<name>` (Dynamo keys call sites by file and line)."""
    return _model_of(name, _run(name, source, f"<{name}>"), source, f"<{name}>")


def _run(stem: str, source: str, filename: str) -> Mapping[str, Any]:
    """Run the text as the module `fxoracle_model_<stem>`, registered in `sys.modules` as an
    import would: torch looks a function's module up there (eager `torch.cond` compiles its
    branches). Its `__name__` is never `__main__`, so a repro's main block does not run."""
    name = "fxoracle_model_" + re.sub(r"\W", "_", stem)
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    try:
        code = compile(source, filename, "exec")
        exec(code, module.__dict__)  # what runpy and import do with a file's text
    except SyntaxError as e:
        raise FxOracleError(f"{filename}:{e.lineno}: syntax error: {e.msg}") from e
    except Exception as e:  # the user's file failed while it ran: bad input, one line
        raise FxOracleError(f"{filename}: loading failed: {describe(e)}") from e
    return module.__dict__


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
    return Model(name, namespace["model"], inputs, bool(namespace.get("dynamic", False)), source)
