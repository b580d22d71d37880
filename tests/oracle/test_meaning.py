"""Meaning forms (spec chapter 08, DIF-3): free choices are forgotten, effects keep their
order."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import cast

import pytest
import torch
import torch.fx
from torch.fx.node import Argument

from checker.io.model_file import model_from_source
from checker.oracle.campaign.tasks import sides_for
from checker.oracle.compare.divergence import Divergence
from checker.oracle.compare.meaning import Interner, meaning
from checker.oracle.compare.run import capture_for, diff_capture, model_caches_dropped
from checker.proof.inline import InlineError

Node = torch.fx.Node


def _graph(build: list[tuple[str, object, tuple[object, ...]]]) -> torch.fx.GraphModule:
    """A graph over placeholders x, y from `(name, target, args)` rows; args name earlier
    nodes; the last node is the output."""
    g = torch.fx.Graph()
    nodes: dict[str, Node] = {"x": g.placeholder("x"), "y": g.placeholder("y")}
    for name, target, args in build:
        resolved = cast(
            tuple[Argument, ...],
            tuple(nodes[a] if isinstance(a, str) and a in nodes else a for a in args),
        )
        if isinstance(target, str):
            nodes[name] = g.call_method(target, resolved)
        else:
            nodes[name] = g.call_function(cast(Callable[..., object], target), resolved)
    g.output(nodes[build[-1][0]])
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _same(a: torch.fx.GraphModule, b: torch.fx.GraphModule) -> bool:
    interner = Interner()
    return meaning(a, interner) == meaning(b, interner)


@pytest.mark.spec("DIF-3")
def test_dif3_independent_nodes_may_swap() -> None:
    a = _graph(
        [("s", torch.sin, ("x",)), ("c", torch.cos, ("y",)), ("o", operator.add, ("s", "c"))]
    )
    b = _graph(
        [("c", torch.cos, ("y",)), ("s", torch.sin, ("x",)), ("o", operator.add, ("s", "c"))]
    )
    assert _same(a, b)


@pytest.mark.spec("DIF-3")
def test_dif3_a_read_may_not_cross_the_update_of_what_it_reads() -> None:
    """`s = sin(x); x.add_(1)` differs from `x.add_(1); s = sin(x)`: the read sees another
    version of x."""
    before = _graph(
        [("s", torch.sin, ("x",)), ("u", "add_", ("x", 1)), ("o", operator.add, ("s", "y"))]
    )
    after = _graph(
        [("u", "add_", ("x", 1)), ("s", torch.sin, ("x",)), ("o", operator.add, ("s", "y"))]
    )
    assert not _same(before, after)


@pytest.mark.spec("DIF-3")
def test_dif3_constants_and_targets_count() -> None:
    half = _graph([("m", operator.mul, ("x", 0.5))])
    assert not _same(half, _graph([("m", operator.mul, ("x", 2.0))]))
    assert not _same(half, _graph([("m", operator.add, ("x", 0.5))]))
    assert _same(half, _graph([("m", operator.mul, ("x", 0.5))]))


@pytest.mark.spec("DIF-3")
def test_dif3_global_state_counts_by_value() -> None:
    """A node moved out of a `no_grad` block differs; a redundant switch changes nothing."""
    grad = torch._C._set_grad_enabled
    inside = _graph([("off", grad, (False,)), ("s", torch.sin, ("x",)), ("on", grad, (True,)),
                     ("o", operator.add, ("s", "y"))])  # fmt: skip
    outside = _graph([("off", grad, (False,)), ("on", grad, (True,)), ("s", torch.sin, ("x",)),
                      ("o", operator.add, ("s", "y"))])  # fmt: skip
    assert not _same(inside, outside)
    redundant = _graph([("off", grad, (False,)), ("off2", grad, (False,)), ("s", torch.sin, ("x",)),
                        ("on", grad, (True,)), ("o", operator.add, ("s", "y"))])  # fmt: skip
    assert _same(inside, redundant)


RANDOM_0_58 = '''"""A generated model (fxoracle randmodels)."""

import torch


def block(h, g, s, f, m):
    t = h + g
    t = t * s
    t = t.reshape(-1).view(h.shape)
    t = t * torch.randn(h.shape, dtype=h.dtype)
    return (t, t.sum())


def model(x0, x1):
    x0 = torch.nn.functional.dropout(x0, 0.25)
    h0 = block(x1, x0, 2.0, torch.tanh, "trunc")
    h1 = block(x0, x1, 2.0, torch.tanh, "floor")
    return (h0[0], h1[0],)


_g = torch.Generator().manual_seed(58)
example_inputs = (
    torch.randn(4, 8, generator=_g, dtype=torch.float32).requires_grad_(),
    torch.randn(4, 8, generator=_g, dtype=torch.float32),
)
dynamic = True
'''
TORCH_SIDES = sides_for("torch")  # as a campaign diffs a random model


@pytest.mark.spec("DIF-3")
def test_dif3_a_subgraph_reading_its_caller_s_node_is_malformed() -> None:
    """torch 2.13's pass on a region whose `view(t, size)` reads a `size` tuple left outside
    (random model 0/58) builds a subgraph that uses the caller's node: it means nothing, so the
    meaning form says `InlineError` and the judge blames the side that built it (not fxoracle).
    The model is that random model's source, kept here: the generator's families have since
    changed what model 0/58 is."""
    caller = _graph([("size", "size", ("x",)), ("t", operator.add, ("x", "y"))])
    size = next(n for n in caller.graph.nodes if n.name == "size")
    body = torch.fx.Graph()
    t = body.placeholder("t")
    body.output(body.call_method("view", (t, size)))
    caller.add_submodule("subgraph_0", torch.fx.GraphModule(torch.nn.Module(), body))
    with pytest.raises(InlineError, match="uses size where it is not defined"):
        meaning(torch.fx.GraphModule(caller, body), Interner())
    model = model_from_source("random_0_58", RANDOM_0_58)
    with model_caches_dropped():
        graph = capture_for(model, TORCH_SIDES)
        assert not isinstance(graph, Divergence), graph
        found = diff_capture(graph, TORCH_SIDES)
    blamed = {d.signature().rsplit("/", 1)[0] for d in found}
    assert "dedup/graph/torch" in blamed and not any("oracle-error" in b for b in blamed)


@pytest.mark.spec("DIF-3", "EFF-2")
def test_dif3_a_read_of_a_view_after_a_write_of_its_base_differs() -> None:
    """`v = x.view(-1); s = sin(v); x.add_(1)` differs from the same with `s` after the
    update: the view shares x's storage (chapter 09), so it reads another version."""
    before = _graph(
        [("v", "view", ("x", -1)), ("s", torch.sin, ("v",)), ("w", "add_", ("x", 1)),
         ("o", operator.add, ("s", "w"))]
    )  # fmt: skip
    after = _graph(
        [("v", "view", ("x", -1)), ("w", "add_", ("x", 1)), ("s", torch.sin, ("v",)),
         ("o", operator.add, ("s", "w"))]
    )  # fmt: skip
    assert not _same(before, after)
    independent = _graph(
        [("v", "view", ("y", -1)), ("w", "add_", ("x", 1)), ("s", torch.sin, ("v",)),
         ("o", operator.add, ("s", "w"))]
    )  # fmt: skip
    swapped = _graph(
        [("v", "view", ("y", -1)), ("s", torch.sin, ("v",)), ("w", "add_", ("x", 1)),
         ("o", operator.add, ("s", "w"))]
    )  # fmt: skip
    assert _same(independent, swapped)  # a write of another storage is free to move


@pytest.mark.spec("DIF-3", "SRT-13")
def test_dif3_draws_keep_their_order_and_writes_of_other_storage_are_free() -> None:
    a = _graph([("r", torch.rand_like, ("x",)), ("d", torch.nn.functional.dropout, ("y",)),
                ("o", operator.add, ("r", "d"))])  # fmt: skip
    b = _graph([("d", torch.nn.functional.dropout, ("y",)), ("r", torch.rand_like, ("x",)),
                ("o", operator.add, ("r", "d"))])  # fmt: skip
    assert not _same(a, b)
