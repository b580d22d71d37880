"""Which ordering rules apply: the sort's part of the policy, read here once (spec chapter 04;
the replacer's switches are read in `reference.pipeline.outline`). torch has one set of
rules; the reference's corrections of them, and the switches that turn each back into torch's
(`reference.policy.Policy`), are what this module adds, counted apart by `fxoracle bench --size`:

- `effect_rules`: with `order_aliases` or `order_draws`, `reference.sort.aliases.access_order`
  orders writes against every alias (SRT-12) and random draws (SRT-13), after torch's mutation
  rule (SRT-6, `reference.sort.deps.mutation_order`, always on);
- `pinned_targets`: the global-state switches that keep their place: torch's autocast (SRT-7),
  functorch's transforms (SRT-11) and, with `pin_grad_mode`, grad mode (SRT-8).

SRT-10 (`keep_erased_deps`) is the replacer's choice, which `reference.pipeline.outline` reads
and passes to `OrderingDeps.redirect`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial

from torch.fx import Graph, Node

from reference.effects.alias_db import AliasDB
from reference.effects.node_effects import AUTOCAST_TARGETS, FUNCTORCH_TARGETS, GRAD_MODE_TARGET
from reference.policy import RIGHT, Policy
from reference.sort.aliases import access_order, ordered_classes

Writes = Mapping[Node, Sequence[int]]  # node -> the flat arg positions it writes
Rule = Callable[[Graph, AliasDB, Writes], Iterable[tuple[Node, Node]]]  # yields (node, dep)
Targets = tuple[Callable[..., object], ...]


def effect_rules(policy: Policy = RIGHT) -> tuple[Rule, ...]:
    """The rules `policy` adds to torch's mutation rule for what nodes write and draw (SRT-12,
    SRT-13): none under torch's rules."""
    if not (policy.order_aliases or policy.order_draws):
        return ()
    return (
        partial(access_order, ordered=ordered_classes(policy.order_aliases, policy.order_draws)),
    )


def pinned_targets(policy: Policy = RIGHT) -> Targets:
    """The global-state switches that keep their place: autocast (torch's, SRT-7), functorch's
    transforms (SRT-11) and, with `policy.pin_grad_mode`, grad mode (SRT-8)."""
    grad = (GRAD_MODE_TARGET,) if policy.pin_grad_mode else ()
    return AUTOCAST_TARGETS + FUNCTORCH_TARGETS + grad
