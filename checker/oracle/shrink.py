"""Minimized repros for the differential oracle (spec chapter 08, DIF-7 and DIF-8).

`ddmin` is Zeller's delta debugging (complements first) under a budget of tries. It shrinks a
model's source (every statement inside a function, every element of a `for` loop's tuple) for
the model-level components, or a graph's nodes (a removed node's uses take its first input)
for the graph-level ones, keeping the divergence: same component, kind and blamed side. Every
candidate is built in memory (`model_from_source`), never written to a file. `write_repros`
then writes, per blamed divergence kind of each component, a standalone file that rebuilds the
small model or graph and fails with an `AssertionError` on the wrong side (its text:
`checker.oracle.repro_text`): against torch, using only torch; against the reference or a
user's implementation, by running the oracle on itself. Candidates are tried in this process
(fast), but a repro is written only once a fresh interpreter proved that running it raises
`AssertionError` (`checker.oracle.repro_run`, DIF-15); when the shrunk one does not, a statement
with a process-wide effect was shrunk away, and the source is shrunk again with every accepted
candidate proved that way. The user's own `if __name__ == "__main__":` block is dropped first,
so it never runs. Its header describes the shrunk case, not the original one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.fx

from checker.io.model_file import Model, model_from_source
from checker.io.reports import write_atomically
from checker.oracle.cases import parse_split_case
from checker.oracle.compare import Sides, sort_case, split_case
from checker.oracle.divergence import Component, Divergence
from checker.oracle.protocol import CapturedGraph
from checker.oracle.repro_run import Prover, fails_here
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
    """The model file without its docstring, corpus metadata assignments and its own
    `if __name__ == "__main__":` block (DIF-15: a repro never runs it)."""
    tree = ast.parse(source)
    tree.body = [s for s in tree.body if not (_is_metadata(s) or _is_main_block(s))]
    return ast.unparse(tree) + "\n"


def _is_main_block(stmt: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either way round)."""
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    sides = [stmt.test.left, *stmt.test.comparators]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    texts = {s.value for s in sides if isinstance(s, ast.Constant)}
    return names == {"__name__"} and texts == {"__main__"}


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
    repro_dir: Path, tag: str = "", prover: Prover | None = None,
) -> list[Path]:  # fmt: skip
    """One repro per blamed (component, kind, blame) of `found`, named
    `<model>_<tag or component>[_<n>]_repro.py` (DIF-8) and written only once proved standalone
    (DIF-15, by `prover`, or one of its own); divergences none can be written for are skipped."""
    if prover is None:
        with closing(Prover()) as own:
            return write_repros(model, graph, found, sides, repro_dir, tag, own)
    written: list[Path] = []
    seen: set[tuple[str, str, str]] = set()
    for d in sorted(found, key=lambda d: ORDER.index(d.component) if d.component else 0):
        key = (str(d.component), str(d.kind), d.wrong)
        if not d.blame.blames_a_side or key in seen:
            continue
        seen.add(key)
        stem = _stem(model.name, tag or str(d.component), written, repro_dir)
        text = _repro_text(model, graph, d, Proving(sides, prover))
        if text is None:
            continue
        target = repro_dir / f"{stem}_repro.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, text)
        written.append(target)
    return written


def _stem(name: str, tag: str, written: Sequence[Path], repro_dir: Path) -> str:
    """`<model>_<tag>`, the model's name without `.py` and with `/` as `__`: two models named
    `model.py` in different folders are named by their folders too, so their repros differ
    (DIF-15)."""
    stem = f"{name.removesuffix('.py').replace('/', '__')}_{tag}"
    taken = {p.name for p in written}
    k = 1
    candidate = stem
    while f"{candidate}_repro.py" in taken:
        k += 1
        candidate = f"{stem}_{k}"
    return candidate


def _same(d: Divergence) -> Callable[[Sequence[Divergence]], bool]:
    key = (d.component, d.kind, d.blame)
    return lambda ds: any((e.component, e.kind, e.blame) == key for e in ds)


@dataclass(frozen=True, slots=True)
class Proving:
    """The sides a repro is made for, and the prover of its texts."""

    sides: Sides
    prover: Prover


def _repro_text(model: Model, graph: CapturedGraph, d: Divergence, how: Proving) -> str | None:
    """The text of a repro of `d` that a fresh interpreter proved to fail (DIF-15), or None."""
    sides = how.sides
    if d.component in (Component.TRACKER, Component.DEDUP):
        return _model_repro_text(strip_metadata(model.source), d, how)
    graph_keeps = _graph_keeps(d, sides, graph.example_inputs)
    small_gm = shrink_graph(graph.gm, graph_keeps)
    shrunk_d = next((e for e in _graph_case(small_gm, graph.example_inputs, d, sides)
                     if _same(d)([e])), d)  # fmt: skip
    text = graph_repro(small_gm, graph.example_inputs, shrunk_d, sides)
    return text if text is not None and how.prover.fails(text) else None


def _model_repro_text(source: str, d: Divergence, how: Proving) -> str | None:
    """Shrunk with candidates tried here and the result proved in a fresh interpreter; when
    the proof fails, a statement with a process-wide effect looked removable: shrunk again with
    every accepted candidate proved (slower: a process each)."""
    text = _shrunk_model_repro(source, d, how.sides, prove=lambda _: True)
    if text is not None and how.prover.fails(text):
        return text
    return _shrunk_model_repro(source, d, how.sides, prove=how.prover.fails)


def _shrunk_model_repro(
    source: str, d: Divergence, sides: Sides, prove: Callable[[str], bool]
) -> str | None:
    """The repro of `source` shrunk while the divergence and the repro's failure stay, each
    accepted candidate's repro also judged by `prove`; None when not even `source` keeps."""
    diverges = _model_keeps(d, sides)
    accepted: dict[str, str] = {}

    def keeps(candidate: str) -> bool:  # the divergence stays, and so does the failure
        found = diverges(candidate)
        text = None if found is None else model_repro(candidate, found, sides)
        if text is None or not fails_here(text) or not prove(text):
            return False
        accepted[candidate] = text
        return True

    small = shrink_source(source, keeps)
    if small in accepted:
        return accepted[small]
    return accepted[source] if keeps(source) else None


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
