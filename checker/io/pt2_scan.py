"""What a `.pt2` would make torch run, told before torch reads it (spec chapter 10, FIL-1).

A `torch.export.save` archive is a zip of JSON (the program, one payload config per kind of
tensor), raw tensor bytes, and maybe code in disguise. torch 2.13's `torch.export.load`
unpickles the sample inputs (`data/sample_inputs/<model>.pt`, `weights_only=True` first, then
`False`: any pickle runs), every weight or constant marked `use_pickle`, torchbind and opaque
constants and legacy `.pt` state dicts; it loads AOTInductor's compiled code; and it hands each
symbolic size's `expr_str` to `sympy.sympify`, which evaluates it as Python. `scan` reads only the
member names and the JSON, and lists each of those as a risk; `safe_copy` is the archive with
the sample inputs left out, which torch then reads without unpickling anything (it builds no
inputs: fxoracle makes them from the graph's metadata).
"""

from __future__ import annotations

import builtins
import io
import keyword
import re
import shutil
import tempfile
import tokenize
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any

import sympy
import torch.utils._sympy.functions as torch_sympy
from torch.export.pt2_archive import constants as pt2

from checker.io.bounds import bounded_expr, check_members, load_json
from checker.io.pickle_scan import hostile_globals
from reference.errors import FxOracleError, describe

OLD_FORMAT = "serialized_exported_program.json"  # torch <= 2.7: its state dict is a pickle
# opaque objects are pickled from torch 2.13; 2.11 and 2.12 write none, and a member so named is
# still reported there (the same risks on every release)
_OPAQUE = str(getattr(pt2, "OPAQUE_OBJ_FILENAME_PREFIX", "opaque_obj_"))
PICKLED_CONSTANTS = (pt2.CUSTOM_OBJ_FILENAME_PREFIX, _OPAQUE)
PROGRAM = re.compile(r"(?P<root>(?:[^/]+/)?)" + re.escape(pt2.MODELS_DIR) + r"[^/]+\.json")
COPY_CHUNK = 1 << 20
NO_OPS = frozenset({".", "[", "]", "{", "}", ":", ";", "@", ":=", "->", "..."})


@dataclass(frozen=True, slots=True)
class Archive:
    """A `.pt2`'s members (`root` is the folder they all sit in), what torch would run or
    unpickle reading it (`risks`, one phrase each), and its pickled sample inputs."""

    root: str
    names: tuple[str, ...]
    risks: tuple[str, ...]
    sample_inputs: tuple[str, ...]

    @property
    def old_format(self) -> bool:
        return OLD_FORMAT in self.names


def scan(p: Path) -> Archive:
    """Read `p`'s names and JSON members, within bounds (`checker.io.bounds`, FIL-12);
    `FxOracleError` when it is no `torch.export` archive."""
    try:
        with open(p, "rb") as f:
            zipped = zipfile.is_zipfile(f)
    except OSError as e:
        raise FxOracleError(f"{p}: cannot read: {e.strerror or e}") from e
    if not zipped:
        raise FxOracleError(f"{p}: not a .pt2 archive (not a zip file, or truncated)")
    try:
        with zipfile.ZipFile(p) as archive:
            check_members(str(p), archive.infolist())
            return _scan(p, archive)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as e:
        raise FxOracleError(f"{p}: not a .pt2 archive: {describe(e)}") from e


def _scan(p: Path, archive: zipfile.ZipFile) -> Archive:
    names = tuple(archive.namelist())
    if OLD_FORMAT in names:
        return Archive("", names, ("an old-format archive, whose state dict is a pickle",), ())
    if any(n.rsplit("/", 1)[-1] == "data.pkl" for n in names):
        raise FxOracleError(f"{p}: a torch.save file (a pickle), not a .pt2: see README, Safety")
    programs = [m for n in names if (m := PROGRAM.fullmatch(n))]
    if not programs:
        raise FxOracleError(f"{p}: a zip file without an exported program (torch.export.save)")
    root = programs[0]["root"]
    local = [n.removeprefix(root) for n in names if n.startswith(root)]
    risks = [r for n in local for r in _risks(p, n, partial(archive.read, root + n))]
    inputs = tuple(root + n for n in local if n.startswith(pt2.SAMPLE_INPUTS_DIR))
    return Archive(root, names, tuple(risks), inputs)


def _risks(p: Path, member: str, read: Callable[[], bytes]) -> list[str]:
    """What torch would unpickle or run for `member` (a name inside the root; `read` gives its
    bytes)."""
    if member.startswith(pt2.AOTINDUCTOR_DIR):
        return [f"{member}: compiled AOTInductor code"]
    if member.startswith(pt2.SAMPLE_INPUTS_DIR):
        return _hostile_inputs(member, read())
    if member.startswith((pt2.WEIGHTS_DIR, pt2.CONSTANTS_DIR)):
        if member.endswith("_config.json"):
            return _pickled_payloads(member, _json(p, member, read()))
        return [f"{member}: a legacy state dict (a pickle)"] if member.endswith(".pt") else []
    if member.startswith(pt2.MODELS_DIR) and member.endswith(".json"):
        return _code_in_sizes(p, member, _expressions(_json(p, member, read())))
    return []


def _code_in_sizes(p: Path, member: str, expressions: Iterator[str]) -> list[str]:
    """The symbolic sizes that are code (risks); `FxOracleError` for one that is no code but
    would compute past the bounds even when trusted (FIL-12)."""
    code = []
    for e in expressions:
        if not plain_expr(e):
            code.append(f"{member}: a symbolic size that is code: {e[:60]!r}")
        elif (why := bounded_expr(e)) is not None:
            raise FxOracleError(f"{p}: {member}: a symbolic size beyond fxoracle's bounds "
                                f"({why}): {e[:60]!r}")  # fmt: skip
    return code


def _hostile_inputs(member: str, data: bytes) -> list[str]:
    """The sample inputs, a `torch.save` pickle: hostile when it calls more than torch's tensor
    rebuilders (it is never read either way)."""
    hostile = hostile_globals(data) if data else ()  # empty: none were saved
    if hostile is None:
        return [f"{member}: a pickle that cannot be read without running it"]
    return [f"{member}: a pickle that calls {hostile[0]}"] if hostile else []


def _json(p: Path, member: str, data: bytes) -> Any:
    return load_json(f"{p}: cannot load the .pt2: {member}", data)


def _pickled_payloads(member: str, config: Any) -> list[str]:
    """The weights or constants of a payload config that torch would unpickle."""
    entries = config.get("config", {}) if isinstance(config, dict) else {}
    found = []
    for fqn, meta in entries.items() if isinstance(entries, dict) else ():
        path_name = str(meta.get("path_name", "")) if isinstance(meta, dict) else ""
        if (
            not isinstance(meta, dict)
            or meta.get("use_pickle")
            or path_name.startswith(PICKLED_CONSTANTS)
        ):
            found.append(f"{member}: `{fqn}` is a pickle")
    return found


def _expressions(data: Any) -> Iterator[str]:
    """Every `expr_str` in a program's JSON (what torch passes to `sympy.sympify`)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "expr_str":
                yield value if isinstance(value, str) else repr(value)
            else:
                yield from _expressions(value)
    elif isinstance(data, list):
        for value in data:
            yield from _expressions(value)


def plain_expr(text: str) -> bool:
    """`text` is an arithmetic expression `sympify` can evaluate without running anything else:
    numbers, operators, symbols, sympy's and torch's expression classes, and quoted symbol
    names (`Symbol('s77', positive=True)`); no attribute, item, builtin or keyword."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return "\n" not in text.strip() and all(_plain_token(t) for t in tokens)


def _plain_token(t: tokenize.TokenInfo) -> bool:
    match t.type:
        case tokenize.NUMBER | tokenize.NEWLINE | tokenize.NL | tokenize.ENDMARKER:
            return True
        case tokenize.OP:
            return t.string not in NO_OPS
        case tokenize.STRING:
            return t.string[:1] in "'\"" and t.string[1:-1].isidentifier()
        case tokenize.NAME:
            return _plain_name(t.string)
    return False


def _plain_name(name: str) -> bool:
    """A symbol (a name sympy does not define), `True`/`False`, or one of sympy's or torch's
    expression classes and constants: never a builtin, a keyword or a sympy function."""
    if name in ("True", "False"):
        return True
    if keyword.iskeyword(name) or "__" in name or hasattr(builtins, name):
        return False
    for space in (torch_sympy, sympy):
        found = getattr(space, name, None)
        if found is not None:
            return isinstance(found, sympy.Basic) or (
                isinstance(found, type) and issubclass(found, sympy.Basic)
            )
    return True


@contextmanager
def safe_copy(p: Path, archive: Archive) -> Iterator[IO[bytes]]:
    """An anonymous temporary copy of `p` whose sample inputs are empty, so torch reads none."""
    with tempfile.TemporaryFile(prefix="fxoracle-pt2-") as copy:
        with zipfile.ZipFile(p) as src, zipfile.ZipFile(copy, "w") as dst:
            for info in src.infolist():
                if info.filename in archive.sample_inputs:
                    dst.writestr(info, b"")
                    continue
                with src.open(info) as r, dst.open(info, "w", force_zip64=True) as w:
                    shutil.copyfileobj(r, w, COPY_CHUNK)
        copy.seek(0)
        yield copy
