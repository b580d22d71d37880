"""The one switch between being right and doing what torch does (specs chapters 03, 04, 09).

Where torch's pass is wrong, the reference is right by default; each field of `Policy` turns one
such rule back into torch's, so that the oracle can show which of torch's rules reproduces
torch's graph (DIF-4) and tests can compare node for node. Only the default is ever correct.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from itertools import combinations


@dataclass(frozen=True, slots=True)
class Policy:
    """Which of the reference's corrections of torch are on. The default has them all."""

    pin_grad_mode: bool = True  # SRT-8: `_set_grad_enabled` keeps its place like autocast
    keep_erased_deps: bool = True  # SRT-10: an erased node's own ordering deps survive it
    order_aliases: bool = True  # SRT-12: writes ordered against reads of every alias
    order_draws: bool = True  # SRT-13: random draws keep their order
    refuse_cycles: bool = True  # RPL-25: a group whose replacement closes a cycle is refused

    def describe_torch_rules(self) -> str:
        """The rules in which this policy follows torch, each with the correction it stands for:
        `unpinned grad mode (without SRT-8)`."""
        names = [_TORCH_RULES[f.name] for f in fields(self) if not getattr(self, f.name)]
        return ", ".join(names)


RIGHT = Policy()
TORCH = Policy(False, False, False, False, False)  # torch's behaviour, wrong results included
# torch's rule, then the reference's correction it stands for ("without SRT-12")
_TORCH_RULES = {
    "pin_grad_mode": "unpinned grad mode (without SRT-8)",
    "keep_erased_deps": "erasure that drops an erased node's own deps (without SRT-10)",
    "order_aliases": "mutation order through direct users only (SRT-6, without SRT-12)",
    "order_draws": "random draws free to move (without SRT-13)",
    "refuse_cycles": "no cycle refusal (without RPL-25)",
}


def fewest_torch_rules() -> list[Policy]:
    """The policies that follow torch in one rule, then in two, then in all (for explaining a
    difference from torch's graph by the fewest of torch's rules)."""
    names = [f.name for f in fields(RIGHT)]
    found = [replace(RIGHT, **dict.fromkeys(pick, False)) for pick in combinations(names, 1)]
    found += [replace(RIGHT, **dict.fromkeys(pick, False)) for pick in combinations(names, 2)]
    return [*found, TORCH]
