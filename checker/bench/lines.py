"""Code lines of Python source, as `fxoracle bench --size` counts them (issue 33).

A code line is a line that holds part of a token other than a comment: blank lines, comment
lines and docstrings (the string that opens a module, class or function body) are not code. A
statement spread over several lines counts each line it spans. `definitions` selects the lines
of named top-level functions and classes, or methods (`Class.method`), so a file can be split
by concept; a class counts without the methods selected on their own.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Mapping
from pathlib import Path

from reference.errors import FxOracleError

NOT_CODE = (
    tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
    tokenize.ENDMARKER,
)  # fmt: skip
Bodied = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
Defined = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def code_lines(source: str) -> frozenset[int]:
    """The 1-based numbers of `source`'s code lines."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in NOT_CODE:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return frozenset(lines - _docstring_lines(ast.parse(source)))


def _docstring_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, Bodied) and node.body:
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def file_lines(path: Path) -> int:
    """The code lines of the file at `path`; a missing file is an error, never 0."""
    return len(code_lines(_read(path)))


def definitions(path: Path, names: Iterable[str]) -> dict[str, int]:
    """The code lines of each named definition of the file at `path`: `f` or `Class` at the top
    level, or `Class.method`; a class without the methods named too. A name the file does not
    define is an error."""
    source = _read(path)
    code = code_lines(source)
    spans = _spans(ast.parse(source))
    wanted = list(names)
    missing = [n for n in wanted if n not in spans]
    if missing:
        raise FxOracleError(f"{path}: defines no {', '.join(missing)} (update the size table)")
    counts: dict[str, int] = {}
    for name in wanted:
        lines = set(spans[name])
        for other in wanted:
            if other.startswith(name + "."):
                lines -= spans[other]
        counts[name] = len(lines & code)
    return counts


def _spans(tree: ast.Module) -> Mapping[str, frozenset[int]]:
    """Line numbers of each top-level definition and method, decorators included."""
    spans: dict[str, frozenset[int]] = {}
    for node in tree.body:
        if isinstance(node, Defined):
            spans[node.name] = _span(node)
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, Defined):
                        spans[f"{node.name}.{member.name}"] = _span(member)
    return spans


def _span(node: Defined) -> frozenset[int]:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return frozenset(range(first, (node.end_lineno or node.lineno) + 1))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise FxOracleError(f"{path}: cannot read: {e.strerror} (update the size table)") from e
