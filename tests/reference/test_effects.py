"""What a node writes, which storage it shares, what it switches and draws (spec chapter 09,
EFF-1 to EFF-6, EFF-8), on captured graphs and hand-built ones."""

from __future__ import annotations

import operator
from collections.abc import Callable

import pytest
import torch
import torch.fx
from torch.fx.node import Argument

from checker.proof.flat import flatten
from reference.dynamo.capture import capture
from reference.effects.alias_db import RNG, AliasDB
from reference.effects.node_effects import (
    WRITES_META,
    Switch,
    aliases,
    declared_aliases,
    declared_writes,
    draws,
    switch,
    writes,
)
from reference.fx_helpers import flat_node_args
from reference.pipeline import deduplicate_graph

Node = torch.fx.Node


def _named(gm: torch.fx.GraphModule) -> dict[str, Node]:
    return {n.name: n for n in gm.graph.nodes}


def _class_of(db: AliasDB, node: Node) -> frozenset[int]:
    return frozenset(db.classes(node))


@pytest.mark.spec("EFF-1")
def test_eff1_recorded_writes_win_over_declared_ones() -> None:
    """Capture records the version counters on every call node (none included): an opaque
    `allow_in_graph` function's write is known (T10), a method ending in `_` that changes no
    values (`requires_grad_`) is not a write."""

    def f(x: torch.Tensor) -> torch.Tensor:
        y = x + 1
        y.mul_(2)
        return y.sin()

    c = capture(f, (torch.randn(3),))
    n = _named(c.gm)
    assert n["mul_"].meta[WRITES_META] == (0,) and writes(n["mul_"]) == (0,)
    assert n["sin"].meta[WRITES_META] == () and writes(n["sin"]) == ()
    g = torch.fx.Graph()
    x = g.placeholder("x")
    grad = g.call_method("requires_grad_", (x,))
    assert writes(grad) == (0,)  # declared by its name, as long as nothing was recorded
    grad.meta[WRITES_META] = ()
    assert writes(grad) == ()


@pytest.mark.spec("EFF-1")
def test_eff1_declared_writes_of_schemas_methods_and_kwargs() -> None:
    g = torch.fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    cases: list[tuple[Node, tuple[int, ...]]] = [
        (g.call_function(torch.ops.aten.add_.Tensor, (x, y)), (0,)),
        (g.call_method("add_", (x, y)), (0,)),
        (g.call_function(operator.setitem, (x, 0, y)), (0,)),
        (g.call_function(operator.iadd, (x, y)), (0,)),
        (g.call_function(torch.relu, (x,), {"inplace": True}), (0,)),
        (g.call_function(torch.add, (x, y), {"out": x}), (2,)),
        (g.call_function(torch.add, (x, y)), ()),
    ]
    assert [declared_writes(node) for node, _ in cases] == [want for _, want in cases]


def _view_cases() -> list[tuple[str, Callable[[torch.Tensor], torch.Tensor]]]:
    return [
        ("view", lambda h: h.view(-1)),
        ("reshape", lambda h: h.reshape(2, 8)),
        ("select", lambda h: h[1]),
        ("slice", lambda h: h[1:]),
        ("narrow", lambda h: h.narrow(0, 1, 2)),
        ("transpose", lambda h: h.t()),
        ("permute", lambda h: h.permute(1, 0)),
        ("expand", lambda h: h[:1].expand(3, 4)),
        ("unsqueeze", lambda h: h.unsqueeze(0)),
        ("as_strided", lambda h: h.as_strided((2, 2), (1, 2))),
        ("split", lambda h: h.split(2)[1]),
        ("chunk", lambda h: h.chunk(2)[0]),
        ("unbind", lambda h: h.unbind()[2]),
        ("detach", lambda h: h.detach()),
        ("inplace", lambda h: h.add_(1)),
    ]


@pytest.mark.spec("EFF-2", "EFF-5")
@pytest.mark.parametrize("kind", [name for name, _ in _view_cases()])
def test_eff2_every_kind_of_view_shares_its_base_class(kind: str) -> None:
    """Each way to alias, captured: the view's value is in its base's class, a fresh value
    (`* 2`) is not."""
    make = dict(_view_cases())[kind]

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = x * 1.0
        return make(h) * 1, h * 2

    c = capture(f, (torch.randn(4, 4),))
    db = AliasDB(c.gm.graph)
    out = next(n for n in c.gm.graph.nodes if n.op == "output")
    read_view, fresh = out.args[0]
    assert isinstance(read_view, Node) and isinstance(fresh, Node)
    view = flat_node_args(read_view)[0]  # the alias `* 1` reads
    base = flat_node_args(fresh)[0]  # h
    assert db.classes(view) == db.classes(base), kind
    assert db.classes(fresh).isdisjoint(db.classes(base))


@pytest.mark.spec("EFF-2")
def test_eff2_contiguous_and_to_alias_only_when_they_return_their_input() -> None:
    def f(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = x * 1.0
        return h.contiguous(), h.t().contiguous(), h.to(torch.float32), h.to(torch.float64)

    c = capture(f, (torch.randn(3, 4),))
    db = AliasDB(c.gm.graph)
    n = _named(c.gm)
    base = db.classes(n["h"])
    same, fresh = [n["contiguous"], n["to"]], [n["contiguous_1"], n["to_1"]]
    assert all(db.classes(v) == base for v in same)
    assert all(db.classes(v).isdisjoint(base) for v in fresh)


@pytest.mark.spec("EFF-2")
def test_eff2_declared_aliases_without_example_values() -> None:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    view = g.call_method("view", (x, -1))
    schema_view = g.call_function(torch.ops.aten.view.default, (x, [-1]))
    fresh = g.call_function(torch.ops.aten.sin.default, (x,))
    inplace = g.call_method("add_", (x, 1))
    assert declared_aliases(view) == ((0, 0),) and aliases(view) == (((0, 0),),)
    assert declared_aliases(schema_view) == ((0, 0),)
    assert declared_aliases(fresh) == () and declared_aliases(inplace) == ((0, 0),)


@pytest.mark.spec("EFF-3", "EFF-4")
def test_eff3_switches_and_eff4_draws() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            y = torch.nn.functional.dropout(x, 0.5) + torch.rand_like(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = torch.sin(y)
        return z.float().bernoulli_(0.5)

    c = capture(f, (torch.randn(3),))
    found = {n.name: (switch(n), draws(n)) for n in c.gm.graph.nodes if switch(n) or draws(n)}
    assert sorted(v for v, _ in found.values() if v) == sorted(
        [Switch.GRAD, Switch.GRAD, Switch.AUTOCAST, Switch.AUTOCAST]
    )
    drawn = sorted(name for name, (_, d) in found.items() if d)
    assert drawn == ["bernoulli_", "dropout", "rand_like"]
    db = AliasDB(c.gm.graph)
    assert all(RNG in db.writes(n) for n in c.gm.graph.nodes if n.name in drawn)


F = torch.nn.functional
# (function, args after the input, kwargs): calls that may or may not draw, as models write them
Call = tuple[Callable[..., object], tuple[Argument, ...], dict[str, Argument]]
SWITCHED_DRAWS: list[Call] = [
    (F.dropout, (0.5, False), {}), (F.dropout, (0.0, True), {}), (F.dropout, (0.5, True), {}),
    (F.dropout, (), {}), (F.dropout, (), {"p": 0.0}), (F.dropout, (0.1,), {"training": False}),
    (F.dropout2d, (0.0, True), {}), (F.alpha_dropout, (0.5,), {}),
    (F.alpha_dropout, (0.5, True), {}), (F.feature_alpha_dropout, (0.5, False), {}),
    (F.rrelu, (), {}), (F.rrelu, (), {"training": True}), (torch.dropout, (0.0, True), {}),
    (torch.dropout, (0.5,), {"train": False}), (torch.dropout, (0.5, True), {}),
    (torch.ops.aten.native_dropout.default, (0.5, False), {}),
    (torch.ops.aten.native_dropout.default, (0.5, True), {}),
    (torch.ops.aten.native_dropout.default, (0.0, True), {}),  # ATen's fused form draws at 0
    (torch.feature_dropout, (0.5, True), {}), (torch.feature_dropout, (0.5, False), {}),
    (torch.feature_dropout, (0.0, True), {}), (torch.native_dropout, (0.5, False), {}),
    (torch.ops.aten.dropout.default, (0.0, True), {}),
    (torch.ops.aten.dropout.default, (0.5, True), {}),
    (torch.ops.aten.rrelu.default, (0.125, 0.3, False), {}),
    (torch.ops.aten.rrelu.default, (0.125, 0.3, True), {}), (torch.ops.aten.rrelu.default, (), {}),
    (torch.ops.aten.rrelu.default, (), {"training": True}),
]  # fmt: skip


@pytest.mark.spec("EFF-4")
@pytest.mark.parametrize("call", range(len(SWITCHED_DRAWS)))
def test_eff4_a_call_draws_exactly_when_torch_draws(call: int) -> None:
    """A dropout given `training=False` or `p=0`, and an eval `rrelu`, draw nothing: run
    eagerly, they leave the generator as it was. Each call's answer is torch's own."""
    fn, args, kwargs = SWITCHED_DRAWS[call]
    g = torch.fx.Graph()
    node = g.call_function(fn, (g.placeholder("x"), *args), kwargs)
    x = torch.randn(2, 4, 8, 8)
    before = torch.get_rng_state()
    fn(x, *args, **kwargs)
    assert draws(node) == (not torch.equal(before, torch.get_rng_state()))


@pytest.mark.spec("EFF-4", "RPL-25")
def test_eff4_an_eval_dropout_outside_a_region_closes_no_cycle() -> None:
    """diffusers calls `F.dropout(h, 0.0, False, False)` in eval mode: read as a draw, one such
    call between a block's gate and its own dropout made RPL-25 refuse the whole block group
    (SD3, Flux). It draws nothing, so both regions are replaced."""

    def f(x: torch.Tensor, c: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h, outs = x, []
        for i in range(2):
            g = torch.sigmoid(c @ w)
            outs.append(F.dropout(g.cos() if i == 0 else g.tan(), 0.0, training=False))
            h = F.dropout(h @ w, 0.0, training=False) * g
        return (h, *outs)

    c = capture(f, (torch.randn(4, 8), torch.randn(4, 8), torch.randn(8, 8)))
    result = deduplicate_graph(c.gm)
    assert not result.refused and len(result.replaced) == 2


@pytest.mark.spec("EFF-5")
def test_eff5_inputs_sharing_a_storage_share_a_class() -> None:
    g = torch.fx.Graph()
    base = torch.randn(4)
    x, y, z = (g.placeholder(name) for name in ("x", "y", "z"))
    x.meta["example_value"], y.meta["example_value"] = base, base[1:]
    z.meta["example_value"] = torch.randn(4)
    g.output((x, y, z))
    db = AliasDB(g)
    assert db.classes(x) == db.classes(y) and db.classes(x).isdisjoint(db.classes(z))


@pytest.mark.spec("EFF-6")
def test_eff6_a_write_through_a_view_writes_the_base() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        h = x * 1.0
        r = h.sum()
        h.view(-1).mul_(2)
        return r + h.sum()

    c = capture(f, (torch.randn(3, 4),))
    db = AliasDB(c.gm.graph)
    n = _named(c.gm)
    assert db.writes(n["mul_"]) == db.classes(n["h"])
    assert db.classes(n["h"]) <= db.reads(n["sum_2"]) and db.classes(n["h"]) <= db.reads(n["view"])


@pytest.mark.spec("EFF-8")
def test_eff8_flat_nodes_carry_the_effects_of_their_nodes() -> None:
    """Inlined through a call, a flat node's writes and aliases point at the flat indices of its
    arguments, so `FlatGraph.storage_classes` is chapter 09's DB of the flat graph."""

    def f(x: torch.Tensor) -> torch.Tensor:
        h = x * 1.0
        v = h.view(-1)
        v.add_(1)
        return h + 1

    c = capture(f, (torch.randn(2, 2),))
    flat = flatten(c.gm)
    index = {node.name: i for i, node in enumerate(flat.nodes)}
    add_ = flat.nodes[index["add_"]]
    assert add_.writes == (index["v"],) and add_.aliases == (((index["v"], 0),),)
    classes = flat.storage_classes()
    assert classes.writes(index["add_"]) == classes.classes(index["h"])
    assert classes.classes(index["v"]) == classes.classes(index["h"])
