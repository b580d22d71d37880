"""Shrinking a model file's source (spec chapter 08, DIF-7, DIF-15).

The removable units are every statement inside a function (a `return` is the model's output,
never a unit) and every element of a `for` loop's tuple, numbered in a fixed walk order;
`shrink_source` keeps the fewest that `keeps` accepts (`ddmin`). `strip_metadata` drops the
docstring, the corpus metadata and the file's own `if __name__ == "__main__":` block first, so a
repro never runs it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection

from checker.oracle.repro.ddmin import BUDGET, ddmin

METADATA = ("scenario", "description", "torch_wrong", "tracking_only")


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
