"""Meaning forms: what a graph computes, not where its nodes stand (spec chapter 08, DIF-3).

Two graphs of one captured model mean the same when every output is the same expression over
the graph inputs and their effects happen in the same order. The form is built on the checker's
flat graph (`checker.proof.flat`: the one inliner, with every node's effects from chapter 09)
and its node keys (`flat.structural_key`, what CHK-3 pairs by), interned (hash-consed) in one
table shared by both graphs. A node's form is its structural key over the forms its inputs have
*when it runs*, and the global state it runs in (`global_state.states`, by value).

"When it runs": every storage class (EFF-5) has a version, the chain of writes to it. A value
read after a write to any of its classes, through whatever alias, is a different input than the
value before (`("after", value, versions)`); every drawing node writes the random generator's
class, so draws keep their order. What is free is forgotten: node names and positions, the order
of nodes with no effect between them, the order of writes to different storages, the numbering
of a split's submodules (inlined), dead nodes, redundant global-state switches. A value leaving
an `invoke_subgraph` call is marked once per call it leaves, so a region outlined and one left
inline differ. The meaning is the outputs' forms at the end, the final versions of the storage
the graph inputs hold, and the generator's.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import torch.fx

from checker.oracle.compare.canon import canonical_graph
from checker.proof.flat import FlatGraph, FlatNode, flatten, structural_key
from checker.proof.global_state import is_switch, states
from checker.proof.inline import InlineError
from reference.effects.alias_db import RNG, StorageClass, StorageClasses

Form = int  # an interned form: equal ints, equal meaning


class Interner:
    """One table of forms shared by the graphs being compared."""

    def __init__(self) -> None:
        self._ids: dict[Hashable, Form] = {}

    def __call__(self, key: Hashable) -> Form:
        return self._ids.setdefault(key, len(self._ids))


def meaning(
    gm: torch.fx.GraphModule, interner: Interner, *, calls: bool = True, draws: bool = True
) -> Hashable:
    """The meaning of `gm` in `interner`'s table (DIF-3); with `calls=False`, what it computes
    with its calls inlined (values leaving a call are not marked); with `draws=False`, what it
    computes whatever the order of its draws (the generator is not versioned). Raises
    `InlineError` for a module that means nothing (a malformed call, a node used outside its
    graph)."""
    return _Forms(flatten(gm), interner, calls, draws).meaning()


def draws_reordered(ours: torch.fx.GraphModule, theirs: torch.fx.GraphModule) -> bool:
    """The two modules, calls inlined, compute the same but for the order of their random
    draws: the cause of a difference, named as such (DIF-29)."""
    interner = Interner()
    try:
        if meaning(ours, interner, calls=False) == meaning(theirs, interner, calls=False):
            return False
        forgetting = (meaning(gm, interner, calls=False, draws=False) for gm in (ours, theirs))
        return len(set(forgetting)) == 1
    except InlineError:
        return False


class _Forms:
    """The forms of one flat graph's nodes, built in execution order."""

    def __init__(
        self, flat: FlatGraph, intern: Interner, calls: bool = True, draws: bool = True
    ) -> None:
        self.flat, self.intern, self.calls, self.draws = flat, intern, calls, draws
        self.db: StorageClasses[int] = flat.storage_classes()
        self.versions: dict[StorageClass, Form] = {}
        self.made: list[tuple[Form | None, ...]] = []  # versions of its classes when made
        self.forms: list[Form] = []
        self.state = states(flat)[0]
        for i, node in enumerate(flat.nodes):
            self._visit(i, node)

    def _visit(self, i: int, node: FlatNode) -> None:
        if is_switch(node):
            form = self.intern(("switch",))
        else:
            inputs = [self.read(j, node.invokes) for j in node.inputs]
            key = structural_key(node, inputs)
            drawn = self.versions.get(RNG) if node.draws and self.draws else None
            form = self.intern((key, ("state", self.state[i]), drawn))
        for cls in sorted(c for c in self.db.writes(i) if self.draws or c != RNG):
            self.versions[cls] = self.intern(("write", self.versions.get(cls), form))
        self.forms.append(form)
        self.made.append(self._now(i))

    def _now(self, j: int) -> tuple[Form | None, ...]:
        return tuple(self.versions.get(c) for c in sorted(self.db.classes(j)))

    def read(self, j: int, scope: Sequence[str]) -> Form:
        """The form of value `j` read now from inside the calls `scope`: marked once per
        `invoke_subgraph` it leaves, and with the writes to its storage since it was made."""
        form = self.forms[j]
        now = self._now(j)
        if now != self.made[j]:
            form = self.intern(("after", form, now))
        inner = self.flat.nodes[j].invokes if self.calls else ()
        shared = 0
        while shared < min(len(inner), len(scope)) and inner[shared] == scope[shared]:
            shared += 1
        for _ in inner[shared:]:
            form = self.intern(("call output", form))
        return form

    def meaning(self) -> Hashable:
        outputs = tuple(self.read(j, ()) for j in self.flat.outputs)
        roots = [i for i, n in enumerate(self.flat.nodes) if n.op in ("placeholder", "get_attr")]
        final = frozenset((self.forms[i], self._now(i)) for i in roots)
        return (self.flat.output, outputs, final, self.versions.get(RNG))


def same_output(
    ours: torch.fx.GraphModule, theirs: torch.fx.GraphModule, strict_order: bool = False
) -> bool:
    """The two outputs agree: the same meaning and, with `strict_order`, the same node
    positions too (DIF-3)."""
    interner = Interner()
    try:
        if meaning(ours, interner) != meaning(theirs, interner):
            return False
    except InlineError:  # not the same: the judge then says which side is malformed
        return False
    return not strict_order or canonical_graph(ours) == canonical_graph(theirs)
