"""Data files read within bounds: a bad file costs one line and exit 2, in bounded time and
memory (spec chapter 10, FIL-12; README "Safety").

- A zip archive's members are checked before any is read (`check_members`): at most
  `MAX_MEMBERS` of them, none encrypted, each stored or deflated, none larger than
  `MAX_MEMBER_BYTES` once inflated, all together at most `MAX_TOTAL_BYTES`, and a deflated
  member above 1 MiB inflates at most `MAX_RATIO` times its size (a zip bomb does more).
- JSON is read only up to `MAX_JSON_BYTES` and `MAX_JSON_DEPTH` levels of nesting
  (`load_json`).
- A symbolic size's text is parsed (`ast`, never evaluated) and every intermediate value it would
  compute is bounded (`bounded_expr`): a number of at most `MAX_DIGITS` digits, at most
  `MAX_BITS` bits anywhere, a power only to an exponent that is itself small.
- A tensor fxoracle builds holds at most `MAX_ELEMENTS` elements (`checker.io.inputs`).
"""

from __future__ import annotations

import ast
import json
import math
import zipfile
from collections.abc import Sequence
from typing import Any

from reference.errors import FxOracleError

MAX_MEMBERS = 100_000
MAX_MEMBER_BYTES = 8 << 30
MAX_TOTAL_BYTES = 32 << 30
MAX_RATIO = 200
RATIO_FROM_BYTES = 1 << 20
MAX_JSON_BYTES = 256 << 20
MAX_JSON_DEPTH = 200
MAX_DIGITS = 40
MAX_BITS = 256.0
MAX_ELEMENTS = 1 << 31  # 8 GiB of float32; 2^40 x 8 is refused
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


def check_members(where: str, members: Sequence[zipfile.ZipInfo]) -> None:
    """`FxOracleError` unless every member can be read within bounds (FIL-12)."""
    if len(members) > MAX_MEMBERS:
        raise FxOracleError(f"{where}: {len(members)} members (at most {MAX_MEMBERS})")
    total = 0
    for info in members:
        _check_member(where, info)
        total += info.file_size
    if total > MAX_TOTAL_BYTES:
        raise FxOracleError(f"{where}: {total} bytes once inflated (at most {MAX_TOTAL_BYTES})")


def _check_member(where: str, info: zipfile.ZipInfo) -> None:
    name = f"{where}: member {info.filename!r}"
    if info.flag_bits & 0x1:
        raise FxOracleError(f"{name} is encrypted")
    if info.compress_type not in METHODS:
        raise FxOracleError(f"{name} uses compression method {info.compress_type} "
                            "(only stored and deflated members are read)")  # fmt: skip
    if info.file_size > MAX_MEMBER_BYTES:
        raise FxOracleError(f"{name} inflates to {info.file_size} bytes "
                            f"(at most {MAX_MEMBER_BYTES})")  # fmt: skip
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > RATIO_FROM_BYTES and ratio > MAX_RATIO:
        raise FxOracleError(f"{name} inflates {ratio:.0f} times (at most {MAX_RATIO}): a zip "
                            "bomb?")  # fmt: skip


def load_json(where: str, data: bytes) -> Any:
    """`data` as JSON, within `MAX_JSON_BYTES` and `MAX_JSON_DEPTH` (FIL-12)."""
    if len(data) > MAX_JSON_BYTES:
        raise FxOracleError(f"{where}: {len(data)} bytes of JSON (at most {MAX_JSON_BYTES})")
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except RecursionError as e:
        raise FxOracleError(f"{where}: JSON nested too deep (at most {MAX_JSON_DEPTH})") from e
    except (ValueError, UnicodeDecodeError) as e:
        raise FxOracleError(f"{where}: not JSON ({str(e)[:200]})") from e
    if _depth(value) > MAX_JSON_DEPTH:
        raise FxOracleError(f"{where}: JSON nested too deep (at most {MAX_JSON_DEPTH})")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def _depth(value: Any) -> int:
    """The nesting depth of parsed JSON, without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]
    return deepest


def bounded_expr(text: str) -> str | None:
    """None when evaluating the expression `text` stays within bounds; else why not (FIL-12).
    A symbol counts as small: only numbers are folded when the text is read."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "not an expression"
    try:
        bits = _bits(tree.body)
    except _Unbounded as e:
        return str(e)
    return None if bits <= MAX_BITS else f"a value of about {bits:.0f} bits"


class _Unbounded(Exception):
    pass


def _bits(node: ast.AST) -> float:
    """An upper bound on log2 of the magnitude of every value computing `node` makes."""
    match node:
        case ast.Constant(value=value):
            return _constant(value)
        case ast.Name():
            return 0.0
        case ast.UnaryOp(operand=operand):
            return _capped(_bits(operand))
        case ast.BinOp(left=left, op=op, right=right):
            return _binary(_bits(left), op, _bits(right))
        case ast.Call():
            return _call(node)
        case ast.Compare(left=left, comparators=rest):
            return max([_bits(left), *map(_bits, rest)])
    raise _Unbounded(f"an expression of kind {type(node).__name__}")


def _constant(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0  # a flag, a symbol's quoted name
    if isinstance(value, float):
        return math.log2(abs(value) + 1) if math.isfinite(value) else 0.0
    if len(str(abs(value))) > MAX_DIGITS:
        raise _Unbounded(f"a number of more than {MAX_DIGITS} digits")
    return float(abs(value).bit_length())


def _binary(left: float, op: ast.operator, right: float) -> float:
    if isinstance(op, ast.Pow):
        return _power(left, right)
    if isinstance(op, ast.Add | ast.Sub | ast.BitAnd | ast.BitOr):
        return _capped(max(left, right) + 1)
    return _capped(left + right)


def _call(node: ast.Call) -> float:
    if node.keywords and any(_bits(k.value) > 1 for k in node.keywords):
        raise _Unbounded("a keyword argument that is not a flag")
    args = [_bits(a) for a in node.args]
    name = node.func.id if isinstance(node.func, ast.Name) else ""
    if "Pow" in name and len(args) == 2:
        return _power(args[0], args[1])
    return _capped(sum(args))


def _power(base: float, exponent: float) -> float:
    """A power's bound: the exponent's value is at most 2**exponent."""
    if exponent > math.log2(MAX_BITS) + 1:
        raise _Unbounded(f"a power to an exponent of about {exponent:.0f} bits")
    return _capped(max(base, 1.0) * 2.0**exponent)


def _capped(bits: float) -> float:
    if bits > MAX_BITS:
        raise _Unbounded(f"a value of more than {MAX_BITS:.0f} bits")
    return bits
