"""Graph modules from files: a Python file that defines `gm` and `example_inputs`, or the same
two saved with `torch.save` (spec chapter 10, FIL-1 and FIL-4; the keys are chapter 01's
offline mode, TRK-10).

A Python file is code and runs (what it raises is bad input, naming the file). A `torch.save`
file is a pickle, which can run anything while it is read: it is loaded only when the user
asked for it by name (`trust_pickles`, the command line's `--trust-pickles`), and must hold
`{"gm": GraphModule, "example_inputs": tuple}` (a pickled `GraphModule` keeps no node
metadata, so the inputs are needed to compute it).
"""

from __future__ import annotations

import runpy
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
import torch.fx

from checker.io.inputs import is_dynamic
from checker.io.user_code import existing, user_code
from reference.dynamo.capture import Capture
from reference.errors import FxOracleError, describe
from reference.fast.keys import track_graph_fast
from reference.fx_helpers import example_value

__all__ = ["existing", "is_torch_save", "load_graph_module_file", "load_saved_module"]

SAVED_SUFFIXES = (".pt", ".pth", ".pkl")  # what torch.save and pickle files are called
SAVED_HOW = '{"gm": GraphModule, "example_inputs": tuple}'


def is_torch_save(p: Path) -> bool:
    """A zip file in `torch.save`'s format (it holds `data.pkl`)."""
    if not zipfile.is_zipfile(p):
        return False
    try:
        with zipfile.ZipFile(p) as archive:
            return any(n.rsplit("/", 1)[-1] == "data.pkl" for n in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False


def load_graph_module_file(path: str | Path) -> Capture:
    """Run a Python file that defines `gm` (a GraphModule) and `example_inputs` (a tuple).

    When a node has neither `example_value` nor `val` metadata, the whole graph gets `val`
    from `FakeTensorProp` on the example inputs, so the tracker can key it. Without
    `stack_trace` metadata nodes have no call site, and equal ops on equal inputs share a key.
    """
    p = existing(path)
    with user_code(str(p), "at import"):  # FIL-4: SystemExit included
        namespace = runpy.run_path(str(p), run_name="__fxoracle_graph__")
    return graph_capture(p, namespace)


def load_saved_module(path: str | Path, *, trust_pickles: bool = False) -> Capture:
    """A `torch.save` file holding `{"gm": ..., "example_inputs": ...}`, unpickled only when
    `trust_pickles` (FIL-1); `FxOracleError` otherwise."""
    p = existing(path)
    if not trust_pickles:
        raise FxOracleError(f"{p}: a torch.save file is a pickle, which runs code as it is read: "
                            "fxoracle loads one only with --trust-pickles")  # fmt: skip
    with user_code(str(p), "while unpickled"):
        saved = torch.load(p, weights_only=False)
    if not isinstance(saved, dict):
        raise FxOracleError(f"{p}: holds a {type(saved).__name__}, not {SAVED_HOW}")
    return graph_capture(p, saved)


def graph_capture(p: Path, found: Mapping[str, Any]) -> Capture:
    """The capture of `found["gm"]` on `found["example_inputs"]`, metadata filled if missing."""
    for name in ("gm", "example_inputs"):
        if name not in found:
            raise FxOracleError(f"{p}: defines no `{name}`")
    gm, inputs = found["gm"], found["example_inputs"]
    if not isinstance(gm, torch.fx.GraphModule):
        raise FxOracleError(f"{p}: `gm` must be a torch.fx.GraphModule, not {type(gm).__name__}")
    if not isinstance(inputs, tuple):
        raise FxOracleError(f"{p}: `example_inputs` must be a tuple, not {type(inputs).__name__}")
    placeholders = gm.graph.find_nodes(op="placeholder")
    if len(placeholders) != len(inputs):
        raise FxOracleError(
            f"{p}: `gm` has {len(placeholders)} placeholders but {len(inputs)} example inputs"
        )
    if any(example_value(n) is None for n in gm.graph.nodes if n.op != "output"):
        _propagate_fake(p, gm, inputs)
    return Capture(gm, track_graph_fast(gm.graph), inputs, is_dynamic(gm))


def _propagate_fake(p: Path, gm: torch.fx.GraphModule, inputs: tuple[Any, ...]) -> None:
    """Fill every node's `val` with a fake tensor computed from `inputs` (FakeTensorProp)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    try:
        FakeTensorProp(gm, FakeTensorMode(allow_non_fake_inputs=True)).propagate(*inputs)
    except Exception as e:  # the user's graph does not run on its own example inputs
        raise FxOracleError(f"{p}: cannot compute metadata for `gm`: {describe(e)}") from e
