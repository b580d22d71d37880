"""Solutions to chapter 09's exercises (effects: what a node reads and writes)."""

from __future__ import annotations

import pytest
import torch
import torch.fx

from reference.dynamo.capture import capture
from reference.effects.alias_db import AliasDB
from reference.order.deps import OrderingDeps
from reference.policy import Policy

Node = torch.fx.Node


def _named(gm: torch.fx.GraphModule) -> dict[str, Node]:
    return {n.name: n for n in gm.graph.nodes}


def _exercise_1(x: torch.Tensor) -> torch.Tensor:
    h = x * 1.0
    v = h.view(-1)
    s = h[0]
    h.add_(1)
    y = v * 2
    return y.sum() + s.sum()


@pytest.mark.spec("EFF-5", "EFF-6", "SRT-12")
def test_09_exercise_1() -> None:
    """h, v, s and the in-place add_ share one class; add_ writes it, v and s read it (they are
    views: making one reads its base), y reads it. SRT-6 orders add_ after v and s (direct users
    of h) and nothing else: y reads v, not h. SRT-12 adds `y after add_`, and the same for the
    `s.sum()` of the return, which reads the view s after the update."""
    c = capture(_exercise_1, (torch.randn(2, 3),))
    n = _named(c.gm)
    db = AliasDB(c.gm.graph)
    h = db.classes(n["h"])
    assert all(db.classes(n[name]) == h for name in ("v", "s", "add_"))
    assert db.writes(n["add_"]) == h and h <= db.reads(n["y"])
    deps = OrderingDeps.from_graph(c.gm.graph)
    torch_deps = OrderingDeps.from_graph(c.gm.graph, policy=Policy(order_aliases=False))
    new = {(k.name, d.name) for k, v in deps.as_mapping().items() for d in v}
    old = {(k.name, d.name) for k, v in torch_deps.as_mapping().items() for d in v}
    assert old == {("add_", "v"), ("add_", "s")}
    assert new - old == {("y", "add_"), ("sum_2", "add_")}


def _exercise_2(x: torch.Tensor) -> torch.Tensor:
    h = x * 1.0
    a, b = h.chunk(2)
    b.mul_(2)
    z = a + 1
    return z


@pytest.mark.spec("EFF-5", "SRT-12")
def test_09_exercise_2() -> None:
    """`a` and `b` are views of one storage: one class, although they do not overlap. `b.mul_`
    writes the class, so `z = a + 1` follows it. The DB is conservative: a storage, not the
    bytes of it a view covers."""
    c = capture(_exercise_2, (torch.randn(4, 3),))
    n = _named(c.gm)
    db = AliasDB(c.gm.graph)
    assert db.classes(n["a"]) == db.classes(n["b"]) == db.writes(n["mul_"])
    deps = OrderingDeps.from_graph(c.gm.graph)
    assert n["mul_"] in deps.deps_of(n["z"])
