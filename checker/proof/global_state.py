"""The global state in force at every node of a flat graph: grad mode and the autocast stack
(spec chapter 06, CHK-4).

A graph switches global state with `_set_grad_enabled` and `_enter_autocast` / `_exit_autocast`.
What matters is not where the switches stand but which state each computing node runs in:
split's partitions re-establish the state at their start (SPL-9) and may be emitted in another
order, a deduplicated call runs its subgraph in the state in force at the call. So CHK-4 compares
states node for node (and at the output, the state handed back to the caller) instead of pairing
the switches themselves.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass
from itertools import repeat

from checker.proof.flat import FlatGraph, FlatNode
from checker.proof.flat_render import render_parts
from checker.proof.verdict import HOLDS, Verdict, Violated
from reference.effects.node_effects import AUTOCAST_TARGETS, GRAD_MODE_TARGET
from reference.names import qualified_name

GRAD = qualified_name(GRAD_MODE_TARGET)
ENTER, EXIT = (qualified_name(t) for t in AUTOCAST_TARGETS)
SWITCHES = (GRAD, ENTER, EXIT)


@dataclass(frozen=True, slots=True)
class State:
    """Grad mode (the constants of the last grad switch, `None`: the caller's) and the
    constants of every autocast region entered and not yet exited, outermost first."""

    grad: Hashable = None
    autocast: tuple[Hashable, ...] = ()

    def after(self, node: FlatNode) -> State:
        """The state once `node` has run."""
        if node.target == GRAD:
            return State(node.consts, self.autocast)
        if node.target == ENTER:
            return State(self.grad, (*self.autocast, node.consts))
        if node.target == EXIT:
            return State(self.grad, self.autocast[:-1])
        return self


def is_switch(node: FlatNode) -> bool:
    """A global-state switch: it computes no value of the dataflow (CHK-3 leaves it out)."""
    return node.op == "call_function" and node.target in SWITCHES


def states(flat: FlatGraph) -> tuple[tuple[State, ...], State]:
    """The state each node runs in, and the state at the output."""
    found: list[State] = []
    state = State()
    for node in flat.nodes:
        found.append(state)
        state = state.after(node)
    return tuple(found), state


def check_states(original: FlatGraph, transformed: FlatGraph, pairs: Mapping[int, int]) -> Verdict:
    """Every paired computing node runs in the state its original ran in, and the graph ends
    in the same state (CHK-4). The witness names the first node whose state differs."""
    ours, our_end = states(original)
    theirs, their_end = states(transformed)
    for i, j in sorted(pairs.items()):
        node = original.nodes[i]
        if node.op == "placeholder" or same_state(ours[i], theirs[j], node.grad_free):
            continue
        other = transformed.nodes[j].name
        return Violated(
            f"CHK-4: {node.name} runs with {state_text(ours[i])} in the original, but {other} "
            f"runs with {state_text(theirs[j])} (global state)"
        )
    if our_end != their_end:
        return Violated(
            f"CHK-4: the original ends with {state_text(our_end)}, the transformed graph with "
            f"{state_text(their_end)} (global state)"
        )
    return HOLDS


def same_state(a: State, b: State, grad_free: bool) -> bool:
    """Equal states; for a node whose value cannot carry gradients (a mask, an index), grad
    mode does not matter, only the autocast stack (CHK-4)."""
    return a.autocast == b.autocast if grad_free else a == b


def state_text(state: State) -> str:
    """`grad mode False, autocast(cpu, torch.bfloat16, True, None)` for witnesses."""
    grad = "the caller's grad mode" if state.grad is None else f"grad mode {_args(state.grad)}"
    if not state.autocast:
        return f"{grad}, no autocast"
    return f"{grad}, " + ", ".join(f"autocast({_args(c)})" for c in state.autocast)


def _args(consts: Hashable) -> str:
    """The constant arguments of a switch, rendered without node names."""
    names: Iterator[str] = repeat("_")
    return ", ".join(render_parts(consts, names))
