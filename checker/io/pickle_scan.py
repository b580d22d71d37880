"""What a pickle would call, read without unpickling it (spec chapter 10, FIL-1).

A pickle runs code by naming a global (`GLOBAL os system`, or `STACK_GLOBAL` on two strings)
and calling it. `pickle_globals` walks the opcodes with `pickletools` (which decodes, never
executes), keeps a shadow stack and memo of the strings pushed, and returns every global the
pickle names, or None when it names one it builds in a way that cannot be read statically (an
extension code, `STACK_GLOBAL` on a computed value). `hostile_globals` lists those outside what
torch's `weights_only` loader allows (tensors, storages, dtypes, `OrderedDict`, ...): a
`torch.save` of plain tensors names none.
"""

from __future__ import annotations

import io
import pickletools
import zipfile

UNKNOWN = object()  # a value on the shadow stack that is not a known string
MARK = object()
STRING_OPS = frozenset({"STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE",
                        "SHORT_BINUNICODE", "BINUNICODE8"})  # fmt: skip
GET_OPS = frozenset({"GET", "BINGET", "LONG_BINGET"})
PUT_OPS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})


def pickle_globals(data: bytes) -> tuple[str, ...] | None:
    """`module.name` of every global `data` names, in order; None when one cannot be read."""
    stack: list[object] = []
    memo: dict[object, object] = {}
    found: list[str] = []
    try:
        for op, arg, _ in pickletools.genops(data):
            name = _global_of(op.name, arg, stack)
            if name is UNKNOWN:
                return None
            if isinstance(name, str):
                found.append(name)
            _step(op, arg, stack, memo)
    except (ValueError, IndexError, EOFError):  # damaged, or a stack it cannot follow
        return None
    return tuple(found)


def _global_of(op: str, arg: object, stack: list[object]) -> object:
    """The global `op` names, None when it names none, UNKNOWN when it cannot be read."""
    if op in ("GLOBAL", "INST") and isinstance(arg, str):
        return arg.replace(" ", ".")
    if op == "STACK_GLOBAL":
        module, name = stack[-2], stack[-1]
        return f"{module}.{name}" if isinstance(module, str) and isinstance(name, str) else UNKNOWN
    return UNKNOWN if op.startswith("EXT") else None


def _step(
    op: pickletools.OpcodeInfo, arg: object, stack: list[object], memo: dict[object, object]
) -> None:
    """The opcode's effect on the shadow stack: pops and pushes, strings and memo tracked."""
    if op.name == "MARK":
        stack.append(MARK)
        return
    if op.name == "MEMOIZE":
        memo[len(memo)] = stack[-1]
        return
    if op.name in PUT_OPS:
        memo[arg] = stack[-1]
        return
    _pop(op, stack)
    for _ in op.stack_after:
        stack.append(_pushed(op.name, arg, memo))


def _pop(op: pickletools.OpcodeInfo, stack: list[object]) -> None:
    before = list(op.stack_before)
    if pickletools.markobject in before:
        while stack.pop() is not MARK:
            pass
        before = before[: before.index(pickletools.markobject)]
    for _ in before:
        if stack.pop() is MARK:
            raise ValueError("a mark where a value was expected")


def _pushed(op: str, arg: object, memo: dict[object, object]) -> object:
    if op in STRING_OPS and isinstance(arg, str):
        return arg
    if op in GET_OPS:
        return memo.get(arg, UNKNOWN)
    return UNKNOWN


def hostile_globals(data: bytes) -> tuple[str, ...] | None:
    """The globals a `torch.save` file's pickle (`data.pkl`) names beyond what
    `torch.load(weights_only=True)` allows; None when they cannot be read without running them
    (the legacy format, several pickles in a row, is not read)."""
    from torch import _weights_only_unpickler

    if not zipfile.is_zipfile(io.BytesIO(data)):
        return None
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        pickles = [
            archive.read(n) for n in archive.namelist() if n.rsplit("/", 1)[-1] == "data.pkl"
        ]
    allowed = set(_weights_only_unpickler._get_allowed_globals())
    hostile: list[str] = []
    for pickle in pickles:
        names = pickle_globals(pickle)
        if names is None:
            return None
        hostile += [n for n in names if n not in allowed]
    return tuple(hostile)
