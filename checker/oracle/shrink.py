"""Minimized repros for the differential oracle (spec chapter 08, DIF-7 and DIF-8).

`ddmin` is Zeller's delta debugging (complements first) under a budget of tries. It shrinks a
model's source (every statement inside a function, every element of a `for` loop's tuple) for
the model-level components, or a graph's nodes (a removed node's uses take its first input)
for the graph-level ones, keeping the divergence: same component, kind and blamed side. Every
candidate is built in memory (`model_from_source`), never written to a file. `write_repros`
then writes, per blamed divergence kind of each component, a standalone file that rebuilds the
small model or graph and fails with an `AssertionError` on the wrong side (its text:
`checker.oracle.repro_text`): against torch, using only torch; against the reference or a
user's implementation, by running the oracle on itself. A repro is kept only if running it does
raise `AssertionError`; its header describes the shrunk case, not the original one.
"""

from __future__ import annotations

import ast
import runpy
import tempfile
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.fx

from checker.io.model_file import Model, model_from_source
from checker.oracle.cases import parse_split_case
from checker.oracle.compare import Sides, sort_case, split_case
from checker.oracle.divergence import Component, Divergence
from checker.oracle.protocol import CapturedGraph
from checker.oracle.repro_text import graph_repro, model_repro
from checker.oracle.run import capture_for, diff_capture
from checker.proof.runs import run

T = TypeVar("T")
BUDGET = 24  # tries per shrink: a try costs one or two captures (~0.2-1 s)
METADATA = ("scenario", "description", "torch_wrong", "tracking_only")
ORDER = (Component.DEDUP, Component.TRACKER, Component.SPLIT, Component.SORT)


def ddmin(units: Sequence[T], keeps: Callable[[tuple[T, ...]], bool], budget: int) -> tuple[T, ...]:
    """A 1-minimal-ish subsequence of `units` that `keeps`, trying at most `budget` subsets."""
    current, n, tries = tuple(units), 2, 0
    while len(current) >= 2 and tries < budget:
        size = -(-len(current) // n)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        for i in range(len(chunks)):
            candidate = tuple(u for j, c in enumerate(chunks) if j != i for u in c)
            tries += 1
            if keeps(candidate):
                current, n = candidate, max(n - 1, 2)
                break
            if tries >= budget:
                return current
        else:
            if n >= len(current):
                return current
            n = min(2 * n, len(current))
    return current


class _Statements(ast.NodeTransformer):
    """Numbers the removable units in a fixed walk order and drops those not in `keep`
    (`keep=None` keeps every unit, to count them)."""

    def __init__(self, keep: Collection[int] | None) -> None:
        self.keep, self.count = keep, 0

    def _take(self) -> bool:
        self.count += 1
        return self.keep is None or self.count - 1 in self.keep

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        # a `return` is the model's output: never a unit, always kept
        kept = [(isinstance(s, ast.Return) or self._take(), s) for s in body]
        out = [self.visit(s) for _, s in kept]
        return [s for (take, _), s in zip(kept, out, strict=True) if take] or [ast.Pass()]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Tuple | ast.List)
            and node.iter.elts
        ):
            elts = [(self._take(), e) for e in node.iter.elts]
            node.iter.elts = [e for take, e in elts if take] or [elts[0][1]]
        if isinstance(node, (ast.FunctionDef, ast.With, ast.For, ast.If)):
            node.body = self._body(node.body)
            return node
        return super().generic_visit(node)


def strip_metadata(source: str) -> str:
    """The model file without its docstring and corpus metadata assignments."""
    tree = ast.parse(source)
    tree.body = [s for s in tree.body if not _is_metadata(s)]
    return ast.unparse(tree) + "\n"


def _is_metadata(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return isinstance(stmt.value.value, str)
    target: ast.expr | None = stmt.target if isinstance(stmt, ast.AnnAssign) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    return isinstance(target, ast.Name) and target.id in METADATA


def source_units(source: str) -> int:
    walker = _Statements(None)
    walker.visit(ast.parse(source))
    return walker.count


def keep_units(source: str, keep: Collection[int]) -> str:
    """`source` with only the removable units in `keep`."""
    return ast.unparse(_Statements(set(keep)).visit(ast.parse(source))) + "\n"


def shrink_source(source: str, keeps: Callable[[str], bool], budget: int = BUDGET) -> str:
    """The smallest variant of `source` found that `keeps` (DIF-7)."""
    kept = ddmin(range(source_units(source)), lambda u: keeps(keep_units(source, u)), budget)
    return keep_units(source, kept)


def shrink_graph(
    gm: torch.fx.GraphModule, keeps: Callable[[torch.fx.GraphModule], bool], budget: int = BUDGET
) -> torch.fx.GraphModule:
    """The smallest graph found that `keeps`: removable are call nodes with a node input."""
    names = [n.name for n in gm.graph.nodes if n.op.startswith("call") and n.all_input_nodes]
    kept = ddmin(names, lambda k: keeps(without_nodes(gm, set(names) - set(k))), budget)
    return without_nodes(gm, set(names) - set(kept))


def without_nodes(gm: torch.fx.GraphModule, names: Collection[str]) -> torch.fx.GraphModule:
    """A copy of `gm` without the nodes named `names`; their uses take their first input."""
    from reference.graph_copy import copy_graph_module

    copy = copy_graph_module(gm).gm
    for node in reversed(list(copy.graph.nodes)):
        if node.name in names:
            node.replace_all_uses_with(node.all_input_nodes[0])
            copy.graph.erase_node(node)
    copy.recompile()
    return copy


def write_repros(
    model: Model, graph: CapturedGraph, found: Sequence[Divergence], sides: Sides,
    repro_dir: Path, tag: str = "",
) -> list[Path]:  # fmt: skip
    """One repro per blamed (component, kind, blame) of `found`, named
    `<model>_<tag or component>[_<n>]_repro.py` (DIF-8); divergences none can be written for
    are skipped."""
    written: list[Path] = []
    seen: set[tuple[str, str, str]] = set()
    for d in sorted(found, key=lambda d: ORDER.index(d.component) if d.component else 0):
        key = (str(d.component), str(d.kind), d.wrong)
        if not d.blame.blames_a_side or key in seen:
            continue
        seen.add(key)
        stem = _stem(model.name, tag or str(d.component), written, repro_dir)
        target = _write_one(model, graph, d, sides, repro_dir / f"{stem}_repro.py")
        if target is not None:
            written.append(target)
    return written


def _stem(name: str, tag: str, written: Sequence[Path], repro_dir: Path) -> str:
    stem = f"{Path(name).stem}_{tag}"
    taken = {p.name for p in written}
    k = 1
    candidate = stem
    while f"{candidate}_repro.py" in taken:
        k += 1
        candidate = f"{stem}_{k}"
    return candidate


def _write_one(
    model: Model, graph: CapturedGraph, d: Divergence, sides: Sides, target: Path
) -> Path | None:
    text = _repro_text(model, graph, d, sides)
    if text is None:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    if fails_with_assertion(target):
        return target
    target.unlink()
    return None


def fails_with_assertion(repro: Path) -> bool:
    """Running `repro` as a script raises AssertionError (in this process)."""
    try:
        runpy.run_path(str(repro), run_name="__main__")
    except AssertionError:
        return True
    except Exception:
        return False
    finally:
        torch._dynamo.reset()
    return False


def _same(d: Divergence) -> Callable[[Sequence[Divergence]], bool]:
    key = (d.component, d.kind, d.blame)
    return lambda ds: any((e.component, e.kind, e.blame) == key for e in ds)


def _repro_text(model: Model, graph: CapturedGraph, d: Divergence, sides: Sides) -> str | None:
    if d.component in (Component.TRACKER, Component.DEDUP):
        diverges = _model_keeps(d, sides)
        last: list[Divergence] = []

        def keeps(source: str) -> bool:  # the divergence stays, and so does the failure
            found = diverges(source)
            if found is None or _fails(model_repro(source, found, sides)) is False:
                return False
            last[:] = [found]
            return True

        small = shrink_source(strip_metadata(model.source), keeps)
        shrunk = diverges(small)
        return model_repro(small, shrunk or d, sides)
    graph_keeps = _graph_keeps(d, sides, graph.example_inputs)
    small_gm = shrink_graph(graph.gm, graph_keeps)
    shrunk_d = next((e for e in _graph_case(small_gm, graph.example_inputs, d, sides)
                     if _same(d)([e])), d)  # fmt: skip
    return graph_repro(small_gm, graph.example_inputs, shrunk_d, sides)


def _fails(text: str | None) -> bool:
    if text is None:
        return False
    with tempfile.TemporaryDirectory(prefix="fxoracle-repro-") as tmp:
        repro = Path(tmp) / "repro.py"
        repro.write_text(text)
        return fails_with_assertion(repro)


def _model_keeps(d: Divergence, sides: Sides) -> Callable[[str], Divergence | None]:
    """The candidate's divergence of `d`'s kind, or None when it has none (or fails to load)."""
    only = sides.only(d.component) if d.component is not None else sides

    def keeps(source: str) -> Divergence | None:
        try:
            graph = capture_for(model_from_source("candidate", source), only)
            found = (graph,) if isinstance(graph, Divergence) else diff_capture(graph, only)
        except Exception:  # the candidate does not load or capture: not kept
            return None
        return next((e for e in found if _same(d)([e])), None)

    return keeps


def _graph_keeps(
    d: Divergence, sides: Sides, inputs: tuple[Any, ...]
) -> Callable[[torch.fx.GraphModule], bool]:
    def keeps(gm: torch.fx.GraphModule) -> bool:
        try:
            if isinstance(run(gm, inputs), str):  # the candidate must be a valid graph
                return False
            return _same(d)(_graph_case(gm, inputs, d, sides))
        except Exception:
            return False

    return keeps


def _graph_case(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], d: Divergence, sides: Sides
) -> list[Divergence]:
    if d.component is Component.SORT:
        return sort_case(gm, sides, d.case)
    return split_case(gm, inputs, sides, parse_split_case(d.case))
