"""Loaders: user graphs in, as graph modules the tracker can key (spec chapter 06, `fxoracle
verify` inputs; the keys are chapter 01's offline mode, TRK-10).

Four kinds of input:

- a `.pt2` archive written by `torch.export.save` (`load_pt2`);
- a Python file that defines a `torch.fx.GraphModule` named `gm` and a tuple `example_inputs`
  (`checker.io.graph_file.load_graph_module_file`), or the same two saved with `torch.save`
  (`load_saved_module`, a pickle: only with `trust_pickles`);
- a model file, which `checker.io.model_file.load_model_file` reads (`load_any` dispatches).

Every loaded graph has one placeholder per example input and returns a flat tuple, like the graphs
Dynamo captures: `gm(*example_inputs)` runs it, and the checker builds inputs per placeholder.
A data file (a `.pt2`, a `torch.save` file) never runs code unless the user passed
`--trust-pickles` (spec chapter 10, FIL-1); a Python file is code, and runs.
"""

from __future__ import annotations

import ast
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch
import torch.fx
from torch.utils._pytree import tree_leaves

from checker.io.graph_file import (
    SAVED_SUFFIXES,
    existing,
    is_torch_save,
    load_graph_module_file,
    load_saved_module,
)
from checker.io.inputs import inputs_from_metadata, is_dynamic
from checker.io.model_file import Model, load_model_file
from checker.io.pt2_scan import Archive, safe_copy, scan
from reference.dynamo.capture import Capture
from reference.errors import FxOracleError, describe
from reference.fast.keys import track_graph_fast

__all__ = ["load_any", "load_graph_module_file", "load_pt2", "load_saved_module"]
Note = Callable[[str], None]  # told what was done differently from what the user may expect


def load_pt2(path: str | Path, *, trust_pickles: bool = False, note: Note | None = None) -> Capture:
    """Read a `torch.export.save` archive; `FxOracleError` (one line) when it cannot be read, or
    when reading it would unpickle or run something stored in it, unless `trust_pickles` (FIL-1).

    The archive is scanned first (`checker.io.pt2_scan`); torch then reads a copy without the
    pickled sample inputs, so the inputs are built from the graph's metadata (`note` says so).
    The graph is `exported.module(check_guards=False)` with a flat calling convention: its
    parameters are `get_attr` nodes, it runs on the user's own inputs, and its nodes keep
    export's `val` and `stack_trace` metadata. `exported.graph_module` keeps the
    same metadata but takes every parameter and buffer as an input, so the saved example inputs
    would not run it. `check_guards=False` leaves out the `_guards_fn` call that would otherwise
    be the graph's first node (and the code torch would generate from the archive's guards).
    """
    p = existing(path)
    archive = scan(p)
    if archive.risks and not trust_pickles:
        raise FxOracleError(f"{p}: {archive.risks[0]}: fxoracle runs nothing stored in a .pt2 "
                            "(--trust-pickles loads it as torch.export.load does)")  # fmt: skip
    try:
        exported = _exported(p, archive, trust_pickles)
        module = exported.module(check_guards=False)
    except FxOracleError:
        raise
    except Exception as e:  # a damaged archive fails anywhere inside torch's deserializer
        raise FxOracleError(f"{p}: cannot load the .pt2: {describe(e)}") from e
    if archive.sample_inputs and not trust_pickles and note is not None:
        note(f"{p}: its sample inputs are a pickle, not read; inputs are built from the graph's "
             "metadata (--trust-pickles reads them)")  # fmt: skip
    gm = _flat_module(module)
    return Capture(gm, track_graph_fast(gm.graph), _pt2_inputs(exported, gm), is_dynamic(gm))


def _exported(p: Path, archive: Archive, trust_pickles: bool) -> Any:
    """The archive's exported program: trusted, as `torch.export.load` reads it; else from a
    copy without the sample inputs (the only pickle left once `scan` found no risk)."""
    if trust_pickles and archive.old_format:
        return torch.export.load(str(p))
    if trust_pickles:
        return _program(p, str(p))
    with safe_copy(p, archive) as copy:
        return _program(p, copy)


def _program(p: Path, source: str | IO[bytes]) -> Any:
    """torch's reader itself: `torch.export.load` would hide its error behind a retry in the old
    format ("check the warnings above", while the warnings are off)."""
    from torch.export.pt2_archive._package import load_pt2 as read_archive

    programs = read_archive(source).exported_programs
    if "model" not in programs:
        raise FxOracleError(f"{p}: the archive holds no program named `model`")
    return programs["model"]


def _pt2_inputs(exported: Any, gm: torch.fx.GraphModule) -> tuple[Any, ...]:
    """The saved example inputs, flat; built from metadata when none were saved (or read)."""
    saved = exported.example_inputs
    leaves = tuple(tree_leaves(saved)) if saved is not None else ()
    if saved is None or len(leaves) != len(gm.graph.find_nodes(op="placeholder")):
        return inputs_from_metadata(gm)
    return leaves


def _flat_module(module: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A plain graph module over `module`'s graph: one argument per placeholder, flat outputs."""
    gm = torch.fx.GraphModule(module, module.graph, class_name="LoadedGraph")
    gm.graph._codegen = torch.fx.graph.CodeGen()
    gm.recompile()
    return gm


def load_any(
    path: str | Path, *, trust_pickles: bool = False, note: Note | None = None
) -> Capture | Model:
    """Dispatch on suffix and content: a `torch.save` file (`.pt`, `.pth`, `.pkl`, or a zip
    holding `data.pkl`) to `load_saved_module`, a `.pt2` or any other zip file to `load_pt2`, a
    Python file that assigns `gm` at top level to `load_graph_module_file`, anything else to
    `checker.io.model_file.load_model_file`. The dispatch reads the file, it does not run it.
    """
    p = existing(path)
    if p.suffix in SAVED_SUFFIXES or is_torch_save(p):
        return load_saved_module(p, trust_pickles=trust_pickles)
    if p.suffix == ".pt2" or zipfile.is_zipfile(p):
        return load_pt2(p, trust_pickles=trust_pickles, note=note)
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
    except (RecursionError, MemoryError) as e:  # nested deeper than the parser goes
        raise FxOracleError(f"{p}: cannot parse: {describe(e)}") from e
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
