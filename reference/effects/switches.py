"""Global state and randomness, per node (spec chapter 09): which global state a node switches
(EFF-3: autocast, grad mode, a functorch transform's level) and whether it draws from the global
random generator (EFF-4). `reference.effects.node_effects` holds what a node writes and aliases,
and re-exports these names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

import torch
import torch.fx
from torch._functorch import predispatch
from torch.amp.autocast_mode import _enter_autocast, _exit_autocast

from reference.fx_helpers import attribute
from reference.names import INVOKE, qualified_name

Node = torch.fx.Node


class Switch(StrEnum):
    """A change of the global state the nodes after it run in (EFF-3)."""

    AUTOCAST = "autocast"
    GRAD = "grad mode"
    FUNCTORCH = "functorch transform"


AUTOCAST_TARGETS: tuple[Callable[..., object], ...] = (_enter_autocast, _exit_autocast)
GRAD_MODE_TARGET: Callable[..., object] = torch._C._set_grad_enabled
# The switches of functorch's transforms (vmap, grad, jvp) and of the autograd state they set.
# Not the saved-tensor-hook switches `grad` also emits: computation is the same on either side.
# Dynamo records jvp's switches as `predispatch` wrappers from torch 2.13, as the C functions
# before (2.11, 2.12, which have no such wrappers): both are switches.
_PREDISPATCH_SWITCHES = (
    "_vmap_increment_nesting", "_vmap_decrement_nesting", "_jvp_increment_nesting",
    "_jvp_decrement_nesting", "_enter_dual_level", "_exit_dual_level",
)  # fmt: skip
FUNCTORCH_TARGETS: tuple[Callable[..., object], ...] = (
    *(f for name in _PREDISPATCH_SWITCHES if (f := getattr(predispatch, name, None))),
    torch._C._functorch._jvp_increment_nesting,
    torch._C._functorch._jvp_decrement_nesting,
    torch._C._enter_dual_level,
    torch._C._exit_dual_level,
    torch._C._functorch._grad_increment_nesting,
    torch._C._functorch._grad_decrement_nesting,
    torch._C._functorch.set_inplace_requires_grad_allowed,
    torch._C._set_fwd_grad_enabled,
)
SWITCHES: Mapping[Callable[..., object], Switch] = {
    **dict.fromkeys(AUTOCAST_TARGETS, Switch.AUTOCAST),
    GRAD_MODE_TARGET: Switch.GRAD,
    **dict.fromkeys(FUNCTORCH_TARGETS, Switch.FUNCTORCH),
}


def switch(node: Node) -> Switch | None:
    """The global state `node` switches, or None (EFF-3)."""
    if node.op != "call_function" or isinstance(node.target, str):
        return None
    try:
        return SWITCHES.get(node.target)
    except TypeError:  # an unhashable target switches nothing
        return None


# functions and methods that draw from the global generator (their last name component)
RANDOM_NAMES = frozenset(
    {
        "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
        "bernoulli", "bernoulli_", "normal", "normal_", "multinomial", "poisson", "uniform_",
        "exponential_", "cauchy_", "geometric_", "log_normal_", "random_", "dropout",
        "dropout_", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "alpha_dropout_",
        "feature_dropout", "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
        "native_dropout", "rrelu", "rrelu_", "gumbel_softmax", "rrelu_with_noise",
        "rrelu_with_noise_",
    }
)  # fmt: skip


# Where the functions whose draw can be switched off take `training` (position, default):
# `F.dropout`'s family, `torch.dropout`, `torch.feature_dropout`, `torch.native_dropout` and
# `rrelu` (`train` or `training`); an ATen op's schema says it by name.
TRAINING: Mapping[str, tuple[int, bool]] = {
    **dict.fromkeys(("dropout", "dropout_", "dropout1d", "dropout2d", "dropout3d",
                     "feature_dropout", "feature_dropout_", "native_dropout"), (2, True)),
    **dict.fromkeys(("alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
                     "feature_alpha_dropout_"), (2, False)),
    **dict.fromkeys(("rrelu", "rrelu_"), (3, False)),
}  # fmt: skip


def draws(node: Node) -> bool:
    """Whether `node` draws from the global random generator (EFF-4): an op tagged
    `nondeterministic_seeded`, a function or method of `RANDOM_NAMES`, or a call of a subgraph
    one of whose nodes draws; not when torch skips the draw (`_skipped`)."""
    if node.op not in ("call_function", "call_method"):
        return False
    if node.target is INVOKE:
        body = _callee(node)
        return body is not None and any(draws(n) for n in body.graph.nodes)
    if isinstance(node.target, torch._ops.OpOverload):
        if torch.Tag.nondeterministic_seeded not in node.target.tags:
            return False
        name = node.target._schema.name.rsplit("::", 1)[-1]
        arguments = enumerate(node.target._schema.arguments)
        where = next(((i, a.default_value) for i, a in arguments if a.name in FLAGS), None)
        return not _skipped(node, name, where)
    name = node.target if isinstance(node.target, str) else qualified_name(node.target)
    name = name.rsplit(".", 1)[-1]
    return name in RANDOM_NAMES and not _skipped(node, name, TRAINING.get(name))


FLAGS = ("training", "train")


def _skipped(node: Node, name: str, training_at: tuple[int, object] | None) -> bool:
    """ATen returns before it draws: `training` (at `training_at`: position, default) is a
    constant False, or a dropout's `p` is a constant 0 (not `native_dropout`'s: it draws)."""
    if training_at is None:
        return False
    position, default = training_at
    training = _argument(node, position, *FLAGS, default=default)
    p = _argument(node, 1, "p") if "dropout" in name and name != "native_dropout" else None
    return training is False or (type(p) in (int, float) and p == 0)


def _argument(node: Node, position: int, *keywords: str, default: object = None) -> object:
    """`node`'s argument at `position`, or given by one of `keywords`, else `default`."""
    if len(node.args) > position:
        return node.args[position]
    return next((node.kwargs[k] for k in keywords if k in node.kwargs), default)


def _callee(node: Node) -> torch.fx.GraphModule | None:
    """The graph module an `invoke_subgraph` node calls, where its graph has an owner."""
    fetch, owner = node.args[0] if node.args else None, node.graph.owning_module
    if not isinstance(fetch, Node) or fetch.op != "get_attr" or owner is None:
        return None
    found = attribute(owner, str(fetch.target))
    return found if isinstance(found, torch.fx.GraphModule) else None
