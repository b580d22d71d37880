"""The node key (spec chapter 01)."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import cast

import pytest
import torch
import torch.fx
from torch.fx.node import Argument

from reference.track.keys import (
    CallSite,
    Const,
    NodeKey,
    Seq,
    TensorMeta,
    Unkeyable,
    current_global_state,
    node_key,
    value_key,
)
from reference.track.tracker import GraphRegionTracker

SITE = CallSite("model.py", 3, 10)


def _graph(
    *calls: tuple[Callable[..., object], tuple[object, ...], dict[str, object]],
) -> list[torch.fx.Node]:
    """One placeholder `x` (a 2x3 float tensor) and one call_function per `calls` entry."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.zeros(2, 3)
    nodes = []
    for target, args, kwargs in calls:
        real_args = cast(tuple[Argument, ...], tuple(x if a == "x" else a for a in args))
        nodes.append(g.call_function(target, real_args, cast(dict[str, Argument], kwargs)))
    return nodes


def _key(node: torch.fx.Node) -> NodeKey:
    return node_key(node, current_global_state(), SITE)


def test_trk1_keys_are_plain_values() -> None:
    """TRK-1: a key is a frozen tree of plain values; equal nodes give equal keys."""
    a, b = _graph((torch.sin, ("x",), {}), (torch.sin, ("x",), {}))
    key = _key(a)
    assert key == _key(b) and hash(key) == hash(_key(b))
    assert dataclasses.is_dataclass(key)
    assert "0x" not in repr(key), "TRK-1: no memory address in a key"
    assert key.target == "torch.sin" and key.args == (value_key(a.args[0]),)


def test_trk4_tensor_metadata() -> None:
    """TRK-4: dtype, shape, stride, requires_grad and friends; not storage offset."""
    meta = value_key(torch.zeros(2, 3))
    assert meta == TensorMeta(
        "torch.float32", ("2", "3"), ("3", "1"), "cpu", "torch.strided",
        "torch.contiguous_format", False, (),
    )  # fmt: skip
    base = torch.zeros(4, 3)
    assert value_key(base[1:3]) == value_key(base[0:2]), "TRK-4: storage offset ignored"
    assert value_key(torch.zeros(3, 2).t()) != meta, "stride differs"
    assert value_key(torch.zeros(2, 3, requires_grad=True)) != meta
    assert value_key(torch.zeros(2, 3, dtype=torch.bfloat16)) != meta


def test_trk5_constants_by_type_and_value() -> None:
    """TRK-5: every constant counts; floats, ints and bools are not confused."""
    assert value_key(0.5) != value_key(2.0)
    assert value_key(1) != value_key(1.0) != value_key(True)
    assert value_key(0.0) != value_key(-0.0)
    assert value_key("floor") != value_key("trunc")
    assert value_key(None) == Const("NoneType", "None")
    assert value_key(torch.float32) != value_key(torch.bfloat16)
    assert value_key(slice(0, 2)) != value_key(slice(0, 3))
    inner = Seq("tuple", (value_key(2), value_key(3)))
    assert value_key((1, (2, 3))) == Seq("tuple", (value_key(1), inner))
    assert value_key((1, (2, 3))) != value_key((1, 2, 3)), "structure kept"
    assert value_key([1, 2]) != value_key((1, 2))
    assert value_key({1: 0.5}) != value_key({"1": 0.5}), "dict keys by type and text"
    assert value_key({"b": 1, "a": 2}) == value_key({"a": 2, "b": 1}), "key order ignored"
    clamp_a, clamp_b = _graph(
        (torch.clamp, ("x", 0.0, 1.0), {}), (torch.clamp, ("x", 0.0, 2.0), {})
    )
    assert _key(clamp_a) != _key(clamp_b)


def test_trk6_target_in_key() -> None:
    """TRK-6: sin and cos at one call site are different nodes."""
    a, b = _graph((torch.sin, ("x",), {}), (torch.cos, ("x",), {}))
    assert _key(a) != _key(b)
    assert _key(a).target == "torch.sin" and _key(b).target == "torch.cos"


class _Opaque:
    pass


def test_trk7_unkeyable_leaves_node_untracked() -> None:
    """TRK-7: an arbitrary object argument makes the node untracked, with a reason."""
    (node,) = _graph((operator.add, ("x", _Opaque()), {}))
    with pytest.raises(Unkeyable):
        _key(node)
    tracker = GraphRegionTracker()
    tracker.track_with(node, current_global_state(), SITE)
    assert node not in tracker.node_to_key
    assert "_Opaque" in tracker.untracked[node]


def test_trk11_kwarg_order_irrelevant() -> None:
    """TRK-11: kwargs are keyed by sorted name, so insertion order does not matter."""
    a, b = _graph(
        (torch.sum, ("x",), {"dim": 0, "keepdim": True}),
        (torch.sum, ("x",), {"keepdim": True, "dim": 0}),
    )
    assert _key(a) == _key(b) and _key(a).kwarg_names == ("dim", "keepdim")
