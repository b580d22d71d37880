"""The catalogue of torch's known bugs: which one a divergence blamed on torch is, and whether it
was already known for the installed torch (spec chapter 08, DIF-11; the bugs are in
`specs/findings.md`).

Each entry recognises its bug by what the oracle found, as fields, never by the words of a
report: the component, the kind, the case, and the divergence's `Evidence` (a region position
pairing two nodes that differ only in a constant is B1; a crash raising `KeyError:
'example_value'` is N3; the reference's refusal RPL-8 is B3; the graph the reference gives
following torch's mutation order is N9). A divergence that no entry recognises stays
unclassified: a new bug, or a known one in a new guise, to triage by hand. `known_in` lists the
torch releases fxoracle observed the bug on (its own runs of the corpus and the real-model tier,
`make compat`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from checker.oracle.compare.divergence import Blame, Divergence, Kind, RunFault
from checker.oracle.compare.faults import Overlap, Unequal
from checker.oracle.sides.sides import Component
from reference.torch_version import MIRRORED, TORCH

ALL = MIRRORED  # observed on every release fxoracle mirrors
Matches = Callable[[Divergence], bool]


@dataclass(frozen=True, slots=True)
class KnownBug:
    """A torch bug of `specs/findings.md`: its id, what it is, how to recognise it."""

    id: str
    summary: str
    component: Component
    matches: Matches
    known_in: tuple[str, ...] = ALL


def _raised(*words: str, kind: Kind | None = None, error: str = "") -> Matches:
    """The side raised (in its pass, or when its output ran) an exception of type `error` (any
    if empty) whose message holds one of `words` (any message if none); the kind is `kind`."""

    def matches(d: Divergence) -> bool:
        raised = d.evidence.raised
        if raised is None or (kind is not None and d.kind is not kind):
            return False
        return (not error or raised.type == error) and (
            not words or any(w in raised.message for w in words)
        )

    return matches


def _pair_differs(by: str) -> Matches:
    """A region position (or a key) pairs two nodes with the same op and target whose
    constants differ (`constant`), or with the same op whose targets differ (`target`)."""

    def matches(d: Divergence) -> bool:
        fault = d.evidence.fault
        if not isinstance(fault, Unequal):
            return False
        a, b = fault.signature, fault.first_signature
        if by == "target":
            return a.op == b.op and a.target != b.target
        return (a.op, a.target) == (b.op, b.target) and a.args != b.args

    return matches


def _overlap(d: Divergence) -> bool:
    return isinstance(d.evidence.fault, Overlap)


def _same_meaning(d: Divergence) -> bool:
    return d.evidence.same_meaning


def _refused(invariant: str) -> Matches:
    """The reference's first refusal is by `invariant`, where the other side outlined the
    region."""
    return lambda d: d.evidence.refusals[:1] == (invariant,)


def _unseen_write(d: Divergence) -> bool:
    """The reference refused a region for a write of an input (RPL-7) that the other side
    outlined into a subgraph: a write its version counters did not see (EFF-9)."""
    return d.kind is Kind.GRAPH and _refused("RPL-7")(d)


def _saved_then_written(d: Divergence) -> bool:
    """A call that saves its operands for backward is followed by a write of one (CHK-22), or
    the reference refused the region the other side outlined for that (RPL-28)."""
    return d.evidence.violated == "CHK-22" or _refused("RPL-28")(d)


def _taken_over(d: Divergence) -> bool:
    """A region held a getitem of a tuple an earlier call replaced (RPL-17): the reference
    passed the call's getitem instead, or refused the region; the other side's pass crashed
    or its graph failed when run."""
    failed = d.kind is Kind.CRASH or d.evidence.raised is not None
    return failed and (d.evidence.taken_over or "RPL-17" in d.evidence.refusals)


def _garbage_operands(d: Divergence) -> bool:
    """The same graph runs differently (N4's first sign), or, whatever the groups, the other
    side's graph raised an index error when run: the runtime read an uninitialised index."""
    raised = d.evidence.raised
    if _same_meaning(d) or raised is None or d.kind is not Kind.GRAPH:
        return _same_meaning(d)
    out_of_range = raised.type == "IndexError" and "index out of range" in raised.message
    return out_of_range or (raised.type == "RuntimeError" and "is out of bounds" in raised.message)


def _torch_rule(rule: str) -> Matches:
    """The reference gives the other side's graph when it follows torch in `rule` (a field of
    `reference.policy.Policy`)."""
    return lambda d: rule in d.evidence.torch_rules


def _no_binder(d: Divergence) -> bool:
    """`split_module`'s `symbol_to_node[s]` fails: `KeyError: s25` names a size symbol (a
    split that raises refuses, DIF-22)."""
    raised = d.evidence.raised
    if d.kind is not Kind.REFUSAL or raised is None or raised.type != "KeyError":
        return False
    return re.match(r"[su]\d+\b", raised.message) is not None


def _unpinned(d: Divergence) -> bool:
    """An order that moves nodes across a grad-mode switch: torch's rule, or a run whose
    `requires_grad` or grad mode differs."""
    grad = d.evidence.run is RunFault.GRAD
    return d.kind is Kind.ORDER and (grad or _torch_rule("pin_grad_mode")(d))


def _in_case(case: str, test: Matches) -> Matches:
    return lambda d: case in d.case and test(d)


def _grad_leak(d: Divergence) -> bool:
    """A `requires_grad` or grad-mode difference, or a global-state violation (CHK-4)."""
    return d.evidence.run is RunFault.GRAD or d.evidence.violated == "CHK-4"


def _numbers_differ(d: Divergence) -> bool:
    return d.evidence.run is not None


_OLD_ORDER = "keep_original_order=False"
# torch's tracker pickles a batched or grad-tracking fake tensor; Dynamo reports the vmap and jvp
# failures as Unsupported without the cause (the capture with the reference's tracker succeeds)
_N7 = _raised(
    "Cannot access storage of", "unimplemented builtin op on tensor arguments", kind=Kind.CRASH
)

# torch's sort fails; 2.11 and 2.12 assert it without a message (`first_line` names the function)
_N10 = _raised(
    "stable topological sort failed", "(no message) in _stable_topological_sort", kind=Kind.CRASH
)

# the runtime asserts on a plain int output; in grad mode it reads the int's `requires_grad` first
# (a dead int the pass returned, `own_dynamic_shape_blocks.py`): before N4, whose "same meaning,
# runs differently" matches that run too
_N5 = _raised("unexpected int output", "'int' object has no attribute 'requires_grad'")

_EVERY_MIRRORED = ("2.11.0", "2.12.0", "2.13.0", "2.14.1", "2.15.0")  # seen on each, 2026-11-27
_N15 = _raised(  # 2.11 and 2.12 assert bare
    "expected example_value to not be a list", "(no message) in _has_aliasing", kind=Kind.CRASH
)

CATALOGUE: tuple[KnownBug, ...] = (
    KnownBug("B1", "float/str constants are not in torch's key", Component.TRACKER,
             _pair_differs("constant")),
    KnownBug("B2", "the target is not in torch's key", Component.TRACKER, _pair_differs("target")),
    KnownBug("B4", "overlapping region groups", Component.TRACKER, _overlap),
    KnownBug("N6", "TF32 set through fp32_precision crashes torch's tracker", Component.TRACKER,
             _raised("legacy and new APIs"), known_in=("2.11.0", "2.12.0", "2.13.0", "2.14.1")),
    KnownBug("N7", "a functorch-wrapped argument (vmap, grad, jvp) crashes torch's tracker",
             Component.TRACKER, _N7),
    KnownBug("N1", "a tuple output used whole outside the region is erased", Component.DEDUP,
             _raised("Tried to erase Node")),
    KnownBug("N3", "a higher-order op's body in a region crashes the pass", Component.DEDUP,
             _raised("'example_value'", error="KeyError")),
    KnownBug("N11", "a region holding a getitem of a tuple an earlier call replaced",
             Component.DEDUP, _taken_over),
    KnownBug("N5", "a subgraph returning a plain int", Component.DEDUP, _N5,
             known_in=("2.11.0", "2.12.0", "2.13.0")),
    KnownBug("N4", "the runtime learns outputs from uninitialised operands", Component.DEDUP,
             _garbage_operands, known_in=("2.11.0", "2.12.0", "2.13.0", "2.14.1", "2.15.0")),
    KnownBug("N8", "an operand of a tensor subclass the runtime has no rule for (NJT)",
             Component.DEDUP, _raised("no rule registered for HOP invoke_subgraph and subclass")),
    KnownBug("SRT-8", "grad-mode switches are not pinned", Component.DEDUP, _unpinned),
    KnownBug("B3", "one placeholder per node of region 0", Component.DEDUP, _refused("RPL-8")),
    KnownBug("B13", "an in-place update between two region nodes", Component.DEDUP,
             _refused("RPL-9")),
    KnownBug("N9", "writes are ordered against direct users only: a read of a view crosses them",
             Component.DEDUP, _torch_rule("order_aliases")),
    KnownBug("N14", "a write no version counter sees (batch_norm's running statistics)",
             Component.DEDUP, _unseen_write, known_in=_EVERY_MIRRORED),
    KnownBug("N15", "a region output whose value is a list (a `_foreach_*_` op's)",
             Component.DEDUP, _N15, known_in=_EVERY_MIRRORED),
    KnownBug("N16", "a call saves every operand for backward: a later write of one fails it",
             Component.DEDUP, _saved_then_written, known_in=_EVERY_MIRRORED),
    KnownBug("N10", "a group whose calls would feed each other fails torch's sort",
             Component.DEDUP, _N10),
    KnownBug("SRT-10", "erasure drops an erased node's own deps", Component.DEDUP,
             _torch_rule("keep_erased_deps")),
    KnownBug("N12", "random draws are not ordered: the sort moves a draw across another",
             Component.DEDUP, _torch_rule("order_draws"), known_in=("2.13.0",)),
    KnownBug("N13", "a node whose target is 'output' is taken for the output by torch's sort",
             Component.SORT, _raised("output nodes should have no users", kind=Kind.CRASH),
             known_in=("2.11.0", "2.12.0")),
    KnownBug("B9", "a cross-partition size whose symbol has no binder", Component.SPLIT,
             _no_binder),
    KnownBug("affix", "partition_affix with global state: a KeyError", Component.SPLIT,
             _in_case("partition_affix", _raised(kind=Kind.REFUSAL, error="KeyError"))),
    KnownBug("B7", "keep_original_order=True runs partitions in appearance order",
             Component.SPLIT,
             _in_case("keep_original_order=True", _raised(kind=Kind.REFUSAL, error="KeyError"))),
    KnownBug("B6", "global-state-only partitions run first", Component.SPLIT,
             _in_case(_OLD_ORDER, _grad_leak)),
    KnownBug("N2", "in-place updates are not dependencies between partitions", Component.SPLIT,
             _in_case(_OLD_ORDER, _numbers_differ)),
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
