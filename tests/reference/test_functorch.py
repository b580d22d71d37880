"""Graphs Dynamo captures under functorch's transforms (`vmap`, `grad`, `jvp`): nodes that compute
with wrapped tensors stay untracked (TRK-14), a region that computes with them is refused
(RPL-24), the transforms' switches keep their place (SRT-11), and the storage of a wrapped value
is the wrapped tensor's (RPL-8). torch's tracker crashes on all of these graphs (N7).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
import torch.fx
from torch.multiprocessing.reductions import StorageWeakRef

from reference.dynamo.capture import Capture, capture
from reference.effects.node_effects import Unreadable, storage_of
from reference.pipeline import deduplicate, outline_groups
from reference.replace.legality import Refusal
from reference.sort.deps import OrderingDeps
from reference.track.offline import track_graph

Node = torch.fx.Node
BATCHED = "a vmap-batched tensor: its metadata hides the transform's dimension and level"


def block(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (h @ w).relu() + h


def combine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a * b + b


def vmap_between_blocks(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor]:
    h = block(block(x, w), w)
    y = torch.vmap(combine)(h, x)
    return (block(y, w),)


def grad_then_blocks(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor]:
    g = torch.func.grad(lambda a: block(block(a, w), w).sum())(x)
    return (block(block(g, w), w),)


def jvp_then_blocks(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor]:
    found = torch.func.jvp(lambda a: block(block(a, w), w), (x,), (w,))
    return (block(block(found[0], found[1]), w),)


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 4, generator=g), torch.randn(4, 4, generator=g)


def _named(gm: torch.fx.GraphModule) -> dict[str, Node]:
    return {n.name: n for n in gm.graph.nodes}


@pytest.mark.spec("TRK-14")
def test_trk14_nodes_with_batched_arguments_stay_untracked_live_and_offline() -> None:
    c = capture(vmap_between_blocks, _inputs())
    live = {n.name: why for n, why in c.tracker.untracked.items()}
    offline = {n.name: why for n, why in track_graph(c.gm.graph).untracked.items()}
    assert live == offline == {"mul": BATCHED, "batched_outputs": BATCHED, "y": BATCHED}


@pytest.mark.spec("SRT-11")
def test_srt11_vmap_switches_are_pinned() -> None:
    """Every node before `_vmap_decrement_nesting` is one of its deps (unless an argument), and
    every node after it depends on it."""
    c = capture(vmap_between_blocks, _inputs())
    order = list(c.gm.graph.nodes)
    deps = OrderingDeps.from_graph(c.gm.graph, {})
    off = _named(c.gm)["_vmap_decrement_nesting"]
    at = order.index(off)
    assert set(deps.deps_of(off)) == set(order[:at])
    assert all(off in deps.deps_of(n) for n in order[at + 1 :])


@pytest.mark.spec("SRT-11", "RPL-16")
def test_srt11_blocks_around_a_vmap_deduplicate_and_keep_its_order() -> None:
    """Unpinned, the sort leaves `_vmap_increment_nesting` and `_vmap_decrement_nesting` where
    they were and moves the vmapped ops after the decrement: the module raises."""
    c = capture(vmap_between_blocks, _inputs())
    original = copy.deepcopy(c.gm)
    result = deduplicate(c.gm, c.tracker)
    assert len(result.replaced) == 3
    order = [n.name for n in c.gm.graph.nodes]
    on, off = order.index("_vmap_increment_nesting"), order.index("_vmap_decrement_nesting")
    assert on < order.index("_add_batch_dim") < order.index("y") < off
    torch.testing.assert_close(c.gm(*_inputs()), original(*_inputs()))


@pytest.mark.spec("RPL-24")
def test_rpl24_a_region_computing_with_batched_values_is_refused() -> None:
    def two_vmaps(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(torch.vmap(combine)(t.sin(), t) for t in (x, y))

    c = capture(two_vmaps, _inputs())
    n = _named(c.gm)
    regions = [[n["mul"], n["batched_outputs"]], [n["mul_1"], n["batched_outputs_1"]]]
    result = outline_groups(c.gm, [regions], {})
    assert [r.reason for r in result.refused] == [Refusal.FUNCTORCH, Refusal.FUNCTORCH]
    assert result.refused[0].detail == "_add_batch_dim is a vmap-batched tensor"
    assert not result.replaced


@pytest.mark.spec("TRK-14", "RPL-24", "SRT-11")
@pytest.mark.parametrize("model", [grad_then_blocks, jvp_then_blocks], ids=["grad", "jvp"])
def test_blocks_after_a_transform_deduplicate_and_compute_the_same(
    model: Callable[..., tuple[torch.Tensor]],
) -> None:
    c: Capture = capture(model, _inputs())
    original = copy.deepcopy(c.gm)
    assert c.tracker.untracked, "the nodes inside the transform compute with wrapped tensors"
    result = deduplicate(c.gm, c.tracker)
    assert result.replaced and not result.refused
    torch.testing.assert_close(c.gm(*_inputs()), original(*_inputs()))


@pytest.mark.spec("RPL-8")
def test_rpl8_a_batched_value_lives_in_the_wrapped_tensors_storage() -> None:
    c = capture(vmap_between_blocks, _inputs())
    n = _named(c.gm)
    wrapped = storage_of(n["_add_batch_dim_1"].meta["example_value"])
    inner = storage_of(n["l_x_"].meta["example_value"])
    assert isinstance(wrapped, StorageWeakRef) and wrapped == inner


@pytest.mark.spec("RPL-8")
def test_rpl8_a_storage_that_cannot_be_read_is_unreadable() -> None:
    g = torch.fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.eye(3).to_sparse()
    g.output(x)
    found = storage_of(x.meta["example_value"])
    assert isinstance(found, Unreadable) and found.reason.startswith("torch.sparse_coo tensor")
