"""Loaders: user graphs in, as graph modules the tracker can key (spec chapter 06, `fxoracle
verify` inputs; the keys are chapter 01's offline mode, TRK-6).

Three kinds of input:

- a `.pt2` archive written by `torch.export.save` (`load_pt2`);
- a Python file that defines a `torch.fx.GraphModule` named `gm` and a tuple `example_inputs`
  (`load_graph_module_file`);
- a model file, which `checker.io.model_file.load_model_file` reads (`load_any` dispatches).

Every loaded graph has one placeholder per example input and returns a flat tuple, like the graphs
Dynamo captures: `gm(*example_inputs)` runs it, and the checker builds inputs per placeholder.
`torch.export.load` unpickles, so a `.pt2` must come from a trusted source. This module touches
torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

import ast
import runpy
import zipfile
from pathlib import Path
from typing import Any

import torch
import torch.fx
from torch.utils._pytree import tree_leaves

from checker.io.inputs import inputs_from_metadata, is_dynamic
from checker.io.model_file import Model, load_model_file
from reference.capture import Capture
from reference.errors import FxOracleError, describe
from reference.fx_helpers import example_value
from reference.tracker import track_graph


def load_pt2(path: str | Path) -> Capture:
    """Read a `torch.export.save` archive; `FxOracleError` (one line) when it cannot be read.

    The graph is `exported.module(check_guards=False)` with a flat calling convention: its
    parameters are `get_attr` nodes, it runs on the user's own inputs, and its nodes keep
    export's `val` and `stack_trace` metadata. `exported.graph_module` keeps the
    same metadata but takes every parameter and buffer as an input, so the saved example inputs
    would not run it. `check_guards=False` leaves out the `_guards_fn` call that would otherwise
    be the graph's first node (the shapes are checked by a hook, which the flat module drops).
    """
    p = _existing(path)
    _check_archive(p)
    try:
        exported = torch.export.load(str(p))
        module = exported.module(check_guards=False)
    except Exception as e:  # a damaged archive fails anywhere inside torch's deserializer
        raise FxOracleError(f"{p}: cannot load the .pt2: {describe(e)}") from e
    gm = _flat_module(module)
    return Capture(gm, track_graph(gm.graph), _pt2_inputs(exported, gm), is_dynamic(gm))


def _pt2_inputs(exported: Any, gm: torch.fx.GraphModule) -> tuple[Any, ...]:
    """The saved example inputs, flat; built from metadata when none were saved."""
    saved = exported.example_inputs
    leaves = tuple(tree_leaves(saved)) if saved is not None else ()
    if saved is None or len(leaves) != len(gm.graph.find_nodes(op="placeholder")):
        return inputs_from_metadata(gm)
    return leaves


def _check_archive(p: Path) -> None:
    """Refuse a file that is not a complete `torch.export` archive before torch reads it.

    torch logs a traceback for a damaged zip before raising, so the common cases are told here.
    """
    if not zipfile.is_zipfile(p):
        raise FxOracleError(f"{p}: not a .pt2 archive (not a zip file, or truncated)")
    try:
        with zipfile.ZipFile(p) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError) as e:
        raise FxOracleError(f"{p}: not a .pt2 archive: {describe(e)}") from e
    programs = ("/models/model.json", "serialized_exported_program.json")
    if not any(name.endswith(programs) for name in names):
        raise FxOracleError(f"{p}: a zip file without an exported program (torch.export.save)")


def _flat_module(module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A plain graph module over `module`'s graph: one argument per placeholder, flat outputs."""
    gm = torch.fx.GraphModule(module, module.graph, class_name="LoadedGraph")
    gm.graph._codegen = torch.fx.graph.CodeGen()
    gm.recompile()
    return gm


def load_graph_module_file(path: str | Path) -> Capture:
    """Run a Python file that defines `gm` (a GraphModule) and `example_inputs` (a tuple).

    When a node has neither `example_value` nor `val` metadata, the whole graph gets `val`
    from `FakeTensorProp` on the example inputs, so the tracker can key it. Without
    `stack_trace` metadata nodes have no call site, and equal ops on equal inputs share a key.
    """
    p = _existing(path)
    ns = _run_file(p)
    for name in ("gm", "example_inputs"):
        if name not in ns:
            raise FxOracleError(f"{p}: defines no `{name}`")
    gm, inputs = ns["gm"], ns["example_inputs"]
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
    return Capture(gm, track_graph(gm.graph), inputs, is_dynamic(gm))


def _propagate_fake(p: Path, gm: torch.fx.GraphModule, inputs: tuple[Any, ...]) -> None:
    """Fill every node's `val` with a fake tensor computed from `inputs` (FakeTensorProp)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    try:
        FakeTensorProp(gm, FakeTensorMode(allow_non_fake_inputs=True)).propagate(*inputs)
    except Exception as e:  # the user's graph does not run on its own example inputs
        raise FxOracleError(f"{p}: cannot compute metadata for `gm`: {describe(e)}") from e


def load_any(path: str | Path) -> Capture | Model:
    """Dispatch on suffix and content: a `.pt2` or any zip file to `load_pt2`, a Python file
    that assigns `gm` at top level to `load_graph_module_file`, anything else to
    `checker.io.model_file.load_model_file`. The dispatch reads the source, it does not run it.
    """
    p = _existing(path)
    if p.suffix == ".pt2" or zipfile.is_zipfile(p):
        return load_pt2(p)
    if "gm" in _top_level_names(p):
        return load_graph_module_file(p)
    return load_model_file(p)


def _top_level_names(p: Path) -> set[str]:
    """Names a Python file binds at module level (assignments, imports, defs, classes)."""
    try:
        tree = ast.parse(p.read_bytes(), filename=str(p))
    except SyntaxError as e:
        raise FxOracleError(f"{p}:{e.lineno}: syntax error: {e.msg}") from e
    except (OSError, ValueError) as e:
        raise FxOracleError(f"{p}: cannot read: {describe(e)}") from e
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _existing(path: str | Path) -> Path:
    p = Path(path)
    if not p.is_file():
        raise FxOracleError(f"{p}: no such file")
    return p


def _run_file(p: Path) -> dict[str, Any]:
    try:
        return runpy.run_path(str(p), run_name="__fxoracle_graph__")
    except SyntaxError as e:
        raise FxOracleError(f"{p}:{e.lineno}: syntax error: {e.msg}") from e
    except Exception as e:  # the user's file failed while it ran: bad input, one line
        raise FxOracleError(f"{p}: loading failed: {describe(e)}") from e
