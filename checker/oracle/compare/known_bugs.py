"""The catalogue of torch's known bugs: which one a divergence blamed on torch is, and whether it
was already known for the installed torch (spec chapter 08, DIF-11; the bugs are in
`specs/findings.md`).

Each entry recognises its bug by what the oracle reports, not by the model: the component, the
kind, and words of the detail the oracle itself wrote (a region pairing two nodes that differ
only in a constant is B1; a crash on `KeyError: 'example_value'` is N3). A divergence that no
entry recognises stays unclassified: a new bug, or a known one in a new guise, to triage by
hand. `known_in` lists the torch releases fxoracle observed the bug on (its own runs of the
corpus and the real-model tier, `make compat`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from checker.oracle.compare.divergence import Blame, Divergence, Kind
from checker.oracle.sides.sides import Component
from reference.torch_version import MIRRORED, TORCH

ALL = MIRRORED  # observed on every release fxoracle mirrors
_SIGNATURES = re.compile(r"`(\S+) ([^(`]+)\((.*?)\)`")


@dataclass(frozen=True, slots=True)
class KnownBug:
    """A torch bug of `specs/findings.md`: its id, what it is, how to recognise it."""

    id: str
    summary: str
    component: Component
    matches: Callable[[Divergence], bool]
    known_in: tuple[str, ...] = ALL


def _says(*words: str, kind: Kind | None = None, case: str = "") -> Callable[[Divergence], bool]:
    """The detail holds every word (and, if given, the kind is `kind`, the case names `case`)."""

    def matches(d: Divergence) -> bool:
        fits = (kind is None or d.kind is kind) and case in d.case
        return fits and all(w in d.detail for w in words)

    return matches


def _any(*tests: Callable[[Divergence], bool]) -> Callable[[Divergence], bool]:
    return lambda d: any(test(d) for test in tests)


def _pair_differs(by: str) -> Callable[[Divergence], bool]:
    """A region position pairs two nodes with the same op and target whose constants differ
    (`constant`), or whose targets differ (`target`)."""

    def matches(d: Divergence) -> bool:
        pairs = _SIGNATURES.findall(d.detail)
        if len(pairs) < 2 or not ("is not" in d.detail or "shares a key" in d.detail):
            return False
        (op_a, target_a, args_a), (op_b, target_b, args_b) = pairs[:2]
        if by == "target":
            return bool(op_a == op_b and target_a != target_b)
        return bool((op_a, target_a) == (op_b, target_b) and args_a != args_b)

    return matches


# torch's tracker pickles a batched or grad-tracking fake tensor; Dynamo reports the vmap and jvp
# failures as Unsupported without the cause (the capture with the reference's tracker succeeds)
_N7 = _any(
    *(
        _says(w, kind=Kind.CRASH)
        for w in ("Cannot access storage of", "unimplemented builtin op on tensor arguments")
    )
)


def _no_binder(d: Divergence) -> bool:
    """`split_module`'s `symbol_to_node[s]` fails: `KeyError: s25` names a size symbol."""
    return d.kind is Kind.CRASH and re.search(r"KeyError: [su]\d+\b", d.detail) is not None


_UNPINNED = _any(_says("grad mode", kind=Kind.ORDER), _says("requires_grad", kind=Kind.ORDER))
_OLD_ORDER = "keep_original_order=False"
_GRAD_LEAK = _any(*(_says(w, case=_OLD_ORDER) for w in ("requires_grad", "grad mode", "CHK-4")))

CATALOGUE: tuple[KnownBug, ...] = (
    KnownBug("B1", "float/str constants are not in torch's key", Component.TRACKER,
             _pair_differs("constant")),
    KnownBug("B2", "the target is not in torch's key", Component.TRACKER, _pair_differs("target")),
    KnownBug("B4", "overlapping region groups", Component.TRACKER,
             _says("is in group", "and in group")),
    KnownBug("N6", "TF32 set through fp32_precision crashes torch's tracker", Component.TRACKER,
             _says("legacy and new APIs"), known_in=("2.13.0", "2.14.1")),
    KnownBug("N7", "a functorch-wrapped argument (vmap, grad, jvp) crashes torch's tracker",
             Component.TRACKER, _N7),
    KnownBug("N1", "a tuple output used whole outside the region is erased", Component.DEDUP,
             _says("Tried to erase Node")),
    KnownBug("N3", "a higher-order op's body in a region crashes the pass", Component.DEDUP,
             _says("KeyError: 'example_value'")),
    KnownBug("N4", "the runtime learns outputs from uninitialised operands", Component.DEDUP,
             _says("the same graph runs differently"), known_in=("2.13.0",)),
    KnownBug("N5", "a subgraph returning a plain int", Component.DEDUP,
             _says("unexpected int output"), known_in=("2.13.0",)),
    KnownBug("N8", "an operand of a tensor subclass the runtime has no rule for (NJT)",
             Component.DEDUP, _says("no rule registered for HOP invoke_subgraph and subclass")),
    KnownBug("SRT-8", "grad-mode switches are not pinned", Component.DEDUP, _UNPINNED),
    KnownBug("B3", "one placeholder per node of region 0", Component.DEDUP,
             _says("the reference refused", "RPL-8")),
    KnownBug("B13", "an in-place update between two region nodes", Component.DEDUP,
             _says("the reference refused", "RPL-9")),
    KnownBug("N9", "writes are ordered against direct users only: a read of a view crosses them",
             Component.DEDUP, _says("SRT-12")),
    KnownBug("N10", "a group whose calls would feed each other fails torch's sort",
             Component.DEDUP, _says("stable topological sort failed", kind=Kind.CRASH)),
    KnownBug("SRT-10", "erasure drops an erased node's own deps", Component.DEDUP,
             _says("SRT-10")),
    KnownBug("B9", "a cross-partition size whose symbol has no binder", Component.SPLIT,
             _no_binder),
    KnownBug("affix", "partition_affix with global state: a KeyError", Component.SPLIT,
             _says("KeyError", kind=Kind.CRASH, case="partition_affix")),
    KnownBug("B7", "keep_original_order=True runs partitions in appearance order",
             Component.SPLIT, _says("KeyError", kind=Kind.CRASH, case="keep_original_order=True")),
    KnownBug("B6", "global-state-only partitions run first", Component.SPLIT, _GRAD_LEAK),
    KnownBug("N2", "in-place updates are not dependencies between partitions", Component.SPLIT,
             _says("numbers differ", case=_OLD_ORDER)),
)  # fmt: skip


def identify(d: Divergence) -> KnownBug | None:
    """The catalogued bug `d` is, when the other side is torch, `d` blames it (or is a free
    choice) and one entry matches."""
    if d.other != "torch" or d.blame not in (Blame.OTHER, Blame.NEITHER) or d.component is None:
        return None  # a catalogue of torch's bugs: another side's are its own
    return next((b for b in CATALOGUE if b.component == d.component and b.matches(d)), None)


def classified(found: Sequence[Divergence]) -> tuple[Divergence, ...]:
    """`found` with each divergence's bug id set; a dedup wrong result on a model whose tracker
    divergence is catalogued is that bug (the wrong groups are why the pass went wrong)."""
    ids = {d.component: b.id for d in found if (b := identify(d)) is not None}
    inherited = ids.get(Component.TRACKER)
    out = []
    for d in found:
        bug = identify(d)
        name = bug.id if bug is not None else ""
        torch_s = d.other == "torch" and d.blame is Blame.OTHER
        if not name and d.component is Component.DEDUP and torch_s and inherited:
            name = inherited
        out.append(replace(d, bug=name, known=known_for(name)) if name else d)
    return tuple(out)


def known_for(bug_id: str, version: str = TORCH.version) -> bool:
    """Whether fxoracle had observed bug `bug_id` on torch `version`."""
    return any(b.id == bug_id and version in b.known_in for b in CATALOGUE)
