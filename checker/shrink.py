"""Minimized repros for the differential oracle (spec chapter 08, DIF-7 and DIF-8).

`ddmin` is Zeller's delta debugging (complements first) under a budget of tries. It shrinks a
model file's statements (every statement inside a function, every element of a `for` loop's
tuple) for the model-level components, or a graph's nodes (a removed node's uses take its
first input) for the graph-level ones, keeping the divergence: same component, kind and wrong
side. `write_repro` then writes a standalone file that rebuilds the small model or graph and
fails with an `AssertionError` on the wrong side (its text: `checker.repro_templates`):
against torch, using only torch; against the reference or a user's implementation, by running
the oracle on itself. A repro is kept only if running it does raise `AssertionError`.
"""

from __future__ import annotations

import ast
import runpy
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.fx

from checker.cases import parse_split_case
from checker.compare import Divergence, Sides, sort_case, split_case
from checker.diff import diff_components
from checker.judge import run_module
from checker.repro_templates import graph_repro, model_repro

T = TypeVar("T")
BUDGET = 24  # tries per shrink: a try costs one or two captures (~0.2-1 s)
METADATA = ("scenario", "description", "torch_wrong", "tracking_only")
ORDER = ("dedup", "tracker", "split", "sort")


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
        kept = [(self._take(), s) for s in body]
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
    from checker.graph_copy import copy_graph_module

    copy = copy_graph_module(gm).gm
    for node in reversed(list(copy.graph.nodes)):
        if node.name in names:
            node.replace_all_uses_with(node.all_input_nodes[0])
            copy.graph.erase_node(node)
    copy.recompile()
    return copy


def write_repro(
    path: Path, found: Sequence[Divergence], sides: Sides, repro_dir: Path, tag: str = ""
) -> Path | None:
    """Shrink and write `<stem>_<tag or component>_repro.py` for the first divergence, in
    `ORDER`, that blames a side and can be reproduced; None if none can (DIF-8)."""
    blamed = [d for d in found if d.wrong in ("reference", sides.label)]
    for d in sorted(blamed, key=lambda d: ORDER.index(d.component)):
        text = _repro_text(path, d, sides)
        if text is None:
            continue
        repro_dir.mkdir(parents=True, exist_ok=True)
        target = repro_dir / f"{path.stem}_{tag or d.component}_repro.py"
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
    return lambda ds: any((e.component, e.kind, e.wrong) == (d.component, d.kind, d.wrong)
                          for e in ds)  # fmt: skip


def _repro_text(path: Path, d: Divergence, sides: Sides) -> str | None:
    if d.component in ("tracker", "dedup"):
        diverges = _model_keeps(d, sides)

        def keeps(source: str) -> bool:  # the divergence stays, and so does the failure
            return diverges(source) and _fails(model_repro(source, d, sides))

        return model_repro(shrink_source(strip_metadata(path.read_text()), keeps), d, sides)
    base = sides.reference.deduplicate(path)
    graph_keeps = _graph_keeps(d, sides, base.inputs)
    small = shrink_graph(base.original, graph_keeps)
    return graph_repro(small, base.inputs, d, sides)


def _fails(text: str | None) -> bool:
    if text is None:
        return False
    with tempfile.TemporaryDirectory(prefix="fxoracle-repro-") as tmp:
        repro = Path(tmp) / "repro.py"
        repro.write_text(text)
        return fails_with_assertion(repro)


def _model_keeps(d: Divergence, sides: Sides) -> Callable[[str], bool]:
    only = replace(sides, components=(d.component,))

    def keeps(source: str) -> bool:
        with tempfile.TemporaryDirectory(prefix="fxoracle-shrink-") as tmp:
            candidate = Path(tmp) / "candidate.py"
            candidate.write_text(source)
            try:
                return _same(d)(diff_components(candidate, only))
            except Exception:  # the candidate does not load or capture: not kept
                return False

    return keeps


def _graph_keeps(
    d: Divergence, sides: Sides, inputs: tuple[Any, ...]
) -> Callable[[torch.fx.GraphModule], bool]:
    def keeps(gm: torch.fx.GraphModule) -> bool:
        try:
            run_module(gm, inputs)  # the candidate must be a valid graph
            return _same(d)(_graph_case(gm, inputs, d, sides))
        except Exception:
            return False

    return keeps


def _graph_case(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], d: Divergence, sides: Sides
) -> list[Divergence]:
    if d.component == "sort":
        return sort_case(gm, sides, d.case)
    return split_case(gm, inputs, sides, parse_split_case(d.case))
