"""Minimized repros for the differential oracle (spec chapter 08, DIF-7 and DIF-8).

`ddmin` is Zeller's delta debugging (complements first) under a budget of tries. It shrinks a
model file's statements (every statement inside a function, every element of a `for` loop's
tuple) for the model-level components, or a graph's nodes (a removed node's uses take its
first input) for the graph-level ones, keeping the divergence: same component, kind and wrong
side. `write_repro` then writes a standalone file that rebuilds the small model or graph and
fails with an `AssertionError` on the wrong side: against torch, using only torch; against
the reference or a user's implementation, by running the oracle on itself. A repro is kept only
if running it does raise `AssertionError`.
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

from checker.canon import graph_source
from checker.diff import Divergence, Sides, diff_components, sort_case, split_case
from checker.impls import HOSTILE_SPLIT_CASES, SPLIT_CASES, SplitCase, partition_ids, sort_input

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
    from checker.diff import run_module

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
    return split_case(gm, inputs, sides, _parse_case(d.case))


def _parse_case(text: str) -> SplitCase:
    return next(c for c in SPLIT_CASES + HOSTILE_SPLIT_CASES if str(c) == text)


def _is_torch(sides: Sides, d: Divergence) -> bool:
    return d.wrong == "torch" and type(sides.other).__module__ == "checker.impls"


def model_repro(source: str, d: Divergence, sides: Sides) -> str:
    """The model's source, then a `__main__` block that fails on the wrong side."""
    head = f"# fxoracle repro: {d.component} {d.kind}, wrong: {d.wrong}\n# {d.detail[:300]}\n"
    if not _is_torch(sides, d):
        return head + source + _ORACLE_MAIN.format(d.component, sides.spec, d.wrong)
    main = _TORCH_DEDUP_MAIN if d.component == "dedup" else _TORCH_TRACKER_MAIN
    return head + source + _HELPERS + main


_HELPERS = """

def _fresh(values):
    return tuple(v.detach().clone().requires_grad_(v.requires_grad)
                 if isinstance(v, torch.Tensor) else v for v in values)


def _run(fn):
    args = _fresh(example_inputs)
    out = [t for t in torch.utils._pytree.tree_leaves(fn(*args)) if isinstance(t, torch.Tensor)]
    return out, list(args), [t.requires_grad for t in out]
"""

_TORCH_DEDUP_MAIN = """

if __name__ == "__main__":  # torch 2.13's deduplication changes what the model computes
    expected = _run(model)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(use_graph_deduplication=True):
        dyn = globals().get("dynamic", False)
        try:
            got = _run(torch.compile(model, backend="eager", fullgraph=True, dynamic=dyn))
        except Exception as e:  # the model compiles without deduplication
            raise AssertionError(f"torch.compile with deduplication raised {e!r}") from e
    torch.testing.assert_close(got[:2], expected[:2], equal_nan=True)
    assert got[2] == expected[2], f"requires_grad {got[2]} instead of {expected[2]}"
"""

_TORCH_TRACKER_MAIN = """

if __name__ == "__main__":  # torch 2.13's region groups overlap or pair different nodes
    from torch._dynamo.symbolic_convert import InstructionTranslator

    groups = []

    def backend(gm, inputs):
        tracker = InstructionTranslator.current_tx().output.region_tracker
        groups.extend(tracker.get_identical_regions(gm.graph))
        return gm.forward

    torch._dynamo.reset()
    with torch._dynamo.config.patch(track_nodes_for_deduplication=True):
        dyn = globals().get("dynamic", False)
        torch.compile(model, backend=backend, fullgraph=True, dynamic=dyn)(*_fresh(example_inputs))
    seen = set()
    for group in groups:
        for node in (n for region in group for n in region):
            assert node not in seen, f"{node.name} is in two regions"
            seen.add(node)
        for nodes in zip(*group):
            what = {(n.op, n.target, repr(torch.fx.map_arg((n.args, n.kwargs), lambda _: None)))
                    for n in nodes}
            assert len(what) == 1, f"one region position holds different nodes: {nodes}"
"""

_ORACLE_MAIN = """

if __name__ == "__main__":  # needs fxoracle: the oracle still blames the same side
    from pathlib import Path

    from checker.diff import diff_components, make_sides

    found = diff_components(Path(__file__), make_sides({1!r}, {0!r}))
    blamed = [d for d in found if d.wrong == {2!r}]
    assert not blamed, blamed[0].detail
"""


def graph_repro(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], d: Divergence, sides: Sides
) -> str | None:
    """A script that rebuilds `gm` with torch.fx and fails on the wrong side; None when the
    graph cannot be written as source (a target or constant with no importable name)."""
    built = graph_source(gm, inputs)
    if built is None:
        return None
    head = f"# fxoracle repro: {d.component} {d.kind} [{d.case}], wrong: {d.wrong}\n"
    head += f"# {d.detail[:300]}\nimport builtins\nimport operator\n\nimport torch\n\n"
    if not _is_torch(sides, d):
        return head + built + _ORACLE_GRAPH_MAIN.format(sides.spec, d.component, d.case, d.wrong)
    main = _sort_main(gm, d) if d.component == "sort" else _split_main(gm, d, sides)
    return head + built + main


_ORACLE_GRAPH_MAIN = """

if __name__ == "__main__":  # needs fxoracle: the oracle still blames the same side
    from checker.diff import make_sides, sort_case, split_case
    from checker.impls import HOSTILE_SPLIT_CASES, SPLIT_CASES

    sides = make_sides({0!r}, {1!r}, hostile=True)
    if {1!r} == "sort":
        found = sort_case(gm, sides, {2!r})
    else:
        case = next(c for c in SPLIT_CASES + HOSTILE_SPLIT_CASES if str(c) == {2!r})
        found = split_case(gm, inputs, sides, case)
    blamed = [d for d in found if d.wrong == {3!r}]
    assert not blamed, blamed[0].detail
"""


def _split_main(gm: torch.fx.GraphModule, d: Divergence, sides: Sides) -> str:
    case = _parse_case(d.case)
    ids = partition_ids(case.policy, gm)
    parts = [ids[n] for n in gm.graph.nodes if n.op.startswith("call")]
    simple = type(sides.other).__name__ == "TorchSimpleImpl"
    call = (
        "split_module_simple(gm, dict(zip(calls, parts)), partition_affix=AFFIX)"
        if simple
        else "split_module(gm, None, dict(zip(calls, parts)).__getitem__, "
        "keep_original_order=KEEP, partition_affix=AFFIX)"
    )
    return _SPLIT_MAIN.format(case.keep_original_order, case.affix, parts, call)


_SPLIT_MAIN = """
KEEP, AFFIX = {0!r}, {1!r}
calls = [n for n in gm.graph.nodes if n.op.startswith("call")]
parts = {2!r}


def _run(module, grad_inputs, caller_grad):
    args = [t.detach().clone().requires_grad_(grad_inputs or t.requires_grad)
            if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
    mode = torch.is_grad_enabled()
    torch.set_grad_enabled(caller_grad)
    try:
        out = [t for t in torch.utils._pytree.tree_leaves(module(*args))]
        return out, args, [t.requires_grad for t in out], torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(mode)


if __name__ == "__main__":  # torch 2.13's split_module crashes or changes the result
    from torch.fx.passes.split_module import split_module, split_module_simple

    try:
        split = {3}
    except Exception as e:
        raise AssertionError(f"torch's split failed on a valid graph: {{e!r}}") from e
    probes = [(False, True)]
    if any(n.target is torch._C._set_grad_enabled for n in gm.graph.nodes):
        probes += [(True, True), (True, False)]  # inputs requiring grad; caller under no_grad
    for probe in probes:
        try:
            expected = _run(gm, *probe)
        except Exception:
            continue  # the original does not run this way
        try:
            got = _run(split, *probe)
        except Exception as e:
            raise AssertionError(f"torch's split module raised {{e!r}}") from e
        torch.testing.assert_close(got[:2], expected[:2], equal_nan=True)
        assert got[2:] == expected[2:], f"requires_grad/grad mode {{got[2:]}} != {{expected[2:]}}"
"""


def _sort_main(gm: torch.fx.GraphModule, d: Divergence) -> str:
    scrambled, deps = sort_input(gm, d.case)
    index = {n.name: i for i, n in enumerate(gm.graph.nodes)}
    order = [index[n.name] for n in scrambled.graph.nodes]
    extra = {index[n.name]: [index[x.name] for x in xs] for n, xs in deps.items()}
    return _SORT_MAIN.format(order, extra)


_SORT_MAIN = """
order, extra = {0!r}, {1!r}

if __name__ == "__main__":  # torch 2.13's stable sort leaves a node before a dependency
    from torch._dynamo.graph_deduplication import _stable_topological_sort
    from torch.utils._ordered_set import OrderedSet

    nodes = list(gm.graph.nodes)
    for i in order[:-1]:
        nodes[order[-1]].prepend(nodes[i])
    deps = {{nodes[i]: OrderedSet(nodes[j] for j in js) for i, js in extra.items()}}
    _stable_topological_sort(gm.graph, deps)
    position = {{n: k for k, n in enumerate(gm.graph.nodes)}}
    assert list(gm.graph.nodes)[-1].op == "output", "the output is not last"
    for n in gm.graph.nodes:
        for dep in (*n.all_input_nodes, *deps.get(n, ())):
            assert position[dep] < position[n], f"{{n.name}} comes before {{dep.name}}"
"""
