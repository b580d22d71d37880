"""Tests for `redirect(..., keep_erased_deps=True)`: the ordering constraints that survive region
replacement (spec chapter 04, SRT-9 and SRT-10).

On random erasure sequences every constraint survives on the images of its ends, where torch's
per-erasure update loses some; and the Upstream scenario where the lost constraint lets
a replaced region read an input before its in-place update, both on a hand-built graph and end
to end through `torch.compile`. Plain `redirect` is in `tests/reference/test_deps_replacement.py`.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Mapping, Sequence
from typing import cast

import pytest
import torch
from torch._dynamo.graph_deduplication import _stable_topological_sort
from torch.fx import Graph, GraphModule, Node

from reference.sort.deps import OrderingDeps
from reference.sort.stable import stable_topological_sort
from tests.reference.test_deps import call, names, random_graph, torch_deps, torch_redirect
from tests.reference.test_deps_replacement import random_erasures
from tests.support.corpus import keep_single_use


def _lost_constraints(
    original: Mapping[Node, Sequence[Node]], deps: OrderingDeps, steps: list[tuple[Node, Node]]
) -> int:
    """Original edges whose images (through the erasures) are no longer recorded."""
    image = dict(steps)

    def final(node: Node) -> Node:
        while node in image:
            node = image[node]
        return node

    pairs = ((final(k), final(d)) for k, own in original.items() for d in own)
    return sum(1 for k, d in pairs if k is not d and d not in deps.deps_of(k))


@pytest.mark.spec("SRT-10", "SRT-9")
def test_srt10_keeping_erased_deps_keeps_every_constraint_torch_drops_some() -> None:
    """SRT-10: with `keep_erased_deps=True` every ordering constraint survives the erasures (on the
    images of its ends) and no node lists itself; torch's update loses some."""
    lost_by_torch = 0
    for seed in range(120):
        g, mutated = random_graph(seed, with_grad=False)
        steps = random_erasures(g, random.Random(seed))
        for keep in (True, False):
            deps = OrderingDeps.from_graph(g, mutated)
            original = deps.as_mapping()
            for erased, to in steps:
                deps.redirect(erased, to, keep_erased_deps=keep)
            lost = _lost_constraints(original, deps, steps)
            if keep:
                assert lost == 0, f"seed {seed}"
                assert all(k not in v for k, v in deps.as_mapping().items()), f"seed {seed}"
            lost_by_torch += lost
    assert lost_by_torch > 0


def _region_a(t: torch.Tensor) -> torch.Tensor:
    return (t * 3).sin().sum()


def _region_b(t: torch.Tensor) -> torch.Tensor:
    return (t + 1).cos().sum()


def _region(g: Graph, name: str, t: Node, kind: str) -> list[Node]:
    """A: `(t * 3).sin().sum()`; B: `(t + 1).cos().sum()`, as three nodes."""
    head = call(g, f"{name}0", *((operator.mul, t, 3) if kind == "a" else (operator.add, t, 1)))
    middle = call(g, f"{name}1", torch.sin if kind == "a" else torch.cos, head)
    return [head, middle, call(g, f"{name}2", torch.sum, middle)]


def _late_read_graph() -> tuple[Graph, dict[Node, list[int]], list[list[Node]]]:
    """b1 = B(y); y.mul_(2); a1 = A(y); a2 = A(z); b2 = B(z). Group A is replaced first (its
    first member is later), so a1's call lands before b1's, on which `mul_` waits."""
    g = Graph()
    y, z = g.placeholder("y"), g.placeholder("z")
    b1 = _region(g, "b1_", y, "b")
    mul_ = call(g, "mul_", "mul_", y, 2)
    a1, a2, b2 = _region(g, "a1_", y, "a"), _region(g, "a2_", z, "a"), _region(g, "b2_", z, "b")
    total = b1[-1]
    for region in (a1, a2, b2):
        total = call(g, f"plus_{region[0].name}", operator.add, total, region[-1])
    g.output(total)
    return g, {mul_: [0]}, [a1, a2, b1, b2]


def _replace_by_region_call(
    g: Graph, regions: list[list[Node]], redirect: Callable[[Node, Node], None]
) -> None:
    """Each region becomes one call of `_region_a`/`_region_b` at the graph end."""
    for region in regions:
        target = _region_a if region[0].name.startswith("a") else _region_b
        new = g.call_function(target, (region[0].args[0],))
        region[-1].replace_all_uses_with(new)
        for node in reversed(region):
            g.erase_node(node)
            redirect(node, new)


def _run_late_read(g: Graph) -> torch.Tensor:
    y, z = torch.linspace(0.1, 0.9, 5), torch.linspace(0.0, 2.0, 5)
    return cast(torch.Tensor, GraphModule(torch.nn.Module(), g)(y, z))


def _sorted_late_read(mode: str) -> Graph:
    """The late-read graph after replacement and sort, with torch's deps or ours."""
    g, mutated, regions = _late_read_graph()
    if mode == "torch":
        theirs = torch_deps(g, mutated)
        _replace_by_region_call(g, regions, lambda e, to: torch_redirect(theirs, e, to))
        _stable_topological_sort(g, theirs)
        return g
    deps = OrderingDeps.from_graph(g, mutated)
    keep = mode == "ours-inherit"
    _replace_by_region_call(g, regions, lambda e, to: deps.redirect(e, to, keep_erased_deps=keep))
    stable_topological_sort(g, deps.as_mapping())
    return g


@pytest.mark.spec("SRT-10")
def test_srt10_upstream_dropped_constraint_reads_before_the_mutation() -> None:
    """SRT-10 Upstream: torch's update drops a1's "after mul_" constraint, so the sort runs A(y)
    before `y.mul_(2)`: a wrong result. With `keep_erased_deps=True` the call keeps it."""
    eager = _run_late_read(_late_read_graph()[0])
    results: dict[str, torch.Tensor] = {}
    for mode in ("torch", "ours", "ours-inherit"):
        g = _sorted_late_read(mode)
        order = names(g)
        results[mode] = _run_late_read(g)
        assert (order.index("_region_a") < order.index("mul_")) == (mode != "ours-inherit")
    torch.testing.assert_close(results["ours-inherit"], eager)
    torch.testing.assert_close(results["ours"], results["torch"])
    assert (results["torch"] - eager).abs().item() > 0.1


@pytest.mark.torch_diff
@pytest.mark.spec("SRT-10")
def test_srt10_upstream_torch_compile_gives_a_wrong_result() -> None:
    """SRT-10 Upstream, end to end: torch with `use_graph_deduplication` computes A(y)
    before `y.mul_(2)` in the scenario above (eager and compiled results differ)."""

    def fn(y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        b1 = _region_b(y)
        y.mul_(2)
        return b1 + _region_a(y) + _region_a(z) + _region_b(z)

    y, z = torch.linspace(0.1, 0.9, 5), torch.linspace(0.0, 2.0, 5)
    eager = fn(y.clone(), z)
    flags = {"use_graph_deduplication": True, **keep_single_use()}
    with torch._dynamo.config.patch(flags):
        compiled = torch.compile(fn, backend="eager", fullgraph=True)(y.clone(), z)
    assert (compiled - eager).abs().item() > 0.1
