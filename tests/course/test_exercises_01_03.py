"""Solutions of the exercises at the end of spec chapters 01-03 (issue 8: a course that
cannot rot; the reading path is `specs/course.md`).

One test per exercise, `test_<chapter>_exercise_<n>`, in chapter order; each docstring states
the answer and names the invariants the exercise is about. The graphs are small and built by
hand where possible: the whole file runs in a few seconds.
"""

from __future__ import annotations

import dataclasses
import operator
from collections import deque
from collections.abc import Sequence

import pytest
import torch
import torch.fx

from reference.dynamo.capture import capture
from reference.expand.graph_view import GraphView
from reference.expand.lockstep import expand
from reference.expand.regions import find_identical_regions
from reference.fx_helpers import NodeIndex
from reference.key.keys import constant_key, current_global_state, node_key, value_key
from reference.key.offline import track_graph
from reference.outline.contraction import Contraction
from reference.outline.legality import Refusal
from reference.pipeline import deduplicate
from tests.support.models import call
from tests.support.views import names, view

pytestmark = pytest.mark.filterwarnings("ignore")

Node = torch.fx.Node
GM = torch.fx.GraphModule


# ---- 01 the key ------------------------------------------------------------------------------


@pytest.mark.spec("TRK-5")
def test_01_exercise_1() -> None:
    """TRK-5: `0.0`/`-0.0`, `1`/`True` and `(1, 2)`/`[1, 2]` get different keys: type and
    `repr` count, because ops see them (`1 / (x * -0.0)` is -inf, `full(.., True)` is a bool
    tensor, `full(.., 1)` an int64 one) and the container's type is structure. `torch.float`
    is `torch.float32`, so those keys are equal."""
    x = torch.ones(1)
    assert 0.0 == -0.0 and constant_key(0.0) != constant_key(-0.0)
    torch.testing.assert_close(1 / (x * -0.0), torch.tensor([-float("inf")]))
    assert 1 == True and constant_key(1) != constant_key(True)
    assert (torch.full((1,), True).dtype, torch.full((1,), 1).dtype) == (torch.bool, torch.int64)
    assert value_key((1, 2)) != value_key([1, 2])
    assert constant_key(torch.float32) == constant_key(torch.float)


def _one_line(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) + torch.sin(y)


@pytest.mark.spec("TRK-3", "TRK-10")
def test_01_exercise_2() -> None:
    """TRK-3: live, the call site includes the bytecode offset, so the two `sin` calls on one
    line do not merge. TRK-10: offline, `stack_trace` has no offset, so they do."""
    c = capture(_one_line, (torch.ones(3), torch.ones(3)))
    first, second = (n for n in c.gm.graph.nodes if n.target is torch.sin)
    live = c.tracker.node_to_key
    assert live[first] != live[second]
    site, other = live[first].call_site, live[second].call_site
    assert site is not None and other is not None
    assert site.line == other.line and site.offset != other.offset
    offline = track_graph(c.gm.graph).node_to_key
    assert offline[first] == offline[second]


@pytest.mark.spec("TRK-2")
def test_01_exercise_3() -> None:
    """TRK-2: only `global_state.grad_enabled` differs; under `no_grad` the op records no
    autograd graph, so a region keyed in grad mode must not serve a call under `no_grad`."""
    g = torch.fx.Graph()
    node = call(g, "mul", operator.mul, g.placeholder("x"), 2)
    grad = node_key(node, current_global_state(), None)
    with torch.no_grad():
        no_grad = node_key(node, current_global_state(), None)
    assert grad != no_grad
    assert grad.global_state.grad_enabled and not no_grad.global_state.grad_enabled
    assert dataclasses.replace(no_grad, global_state=grad.global_state) == grad


# ---- 02 expansion ----------------------------------------------------------------------------


def _lockstep_rows() -> list[tuple[str, str, list[str], str | None]]:
    """`test_exp3_lockstep_all_or_none`'s graph: r = tail(p, q) twice; p1 has another key."""
    return [
        ("x", "placeholder", [], None),
        ("p0", "call_function", ["x"], "p"),
        ("q0", "call_function", ["x"], "q"),
        ("r0", "call_function", ["p0", "q0"], "r"),
        ("p1", "call_function", ["x"], "p_other"),
        ("q1", "call_function", ["x"], "q"),
        ("r1", "call_function", ["p1", "q1"], "r"),
    ]


def _pairs_without_popping_refusers(v: GraphView, roots: Sequence[NodeIndex]) -> list[list[str]]:
    """The candidate pairs a broken lock-step compares when a refusing region keeps its
    candidate for the next step (key comparison only, which is all this graph needs)."""
    queues = [deque(v.args[r]) for r in roots]
    compared: list[list[str]] = []
    while queues[0]:
        pair = [q[0] if q else None for q in queues]
        compared.append([v.names[c] if c is not None else "-" for c in pair])
        keys = [v.bucket[c] if c is not None else None for c in pair]
        same = None not in keys and len(set(keys)) == 1
        for q in queues if same else queues[:1]:  # the refusing region does not pop
            q.popleft()
    return compared


@pytest.mark.spec("EXP-3", "EXP-6")
def test_02_exercise_1() -> None:
    """EXP-3: after `[p0, p1]` is refused, a region that kept `p1` would compare `q0` with
    `p1` next and refuse again: the queues are misaligned and `q1` never meets `q0`. Popping
    every queue keeps position i meaning the same node in every region (EXP-6)."""
    v = view(_lockstep_rows())
    group = expand(v).groups[0]
    assert names(v, [group.regions]) == [[["q0", "r0"], ["q1", "r1"]]]
    for position in zip(*group.regions, strict=True):
        assert len({v.bucket[n] for n in position}) == 1
    r0, r1 = v.names.index("r0"), v.names.index("r1")
    broken = _pairs_without_popping_refusers(v, [NodeIndex(r0), NodeIndex(r1)])
    assert broken == [["p0", "p1"], ["q0", "p1"]]


@pytest.mark.spec("EXP-8", "RPL-25")
def test_02_exercise_2() -> None:
    """EXP-8, RPL-25: `a_k = sin(x_k); b_k = add(a_k, a_{1-k})`. Each region `[a_k, b_k]` is
    safe to contract alone (no outside user of it feeds its root), so expansion keeps the
    group; contracting both closes `region 0 -> region 1 -> region 0`, which the replacer
    sees and refuses."""
    g = torch.fx.Graph()
    x0, x1 = g.placeholder("x0"), g.placeholder("x1")
    a0, a1 = g.call_function(torch.sin, (x0,)), g.call_function(torch.sin, (x1,))
    g.output((g.call_function(torch.add, (a0, a1)), g.call_function(torch.add, (a1, a0))))
    gm = GM(torch.nn.Module(), g)
    groups = find_identical_regions(gm.graph, track_graph(gm.graph))
    assert [[[n.name for n in r] for r in group] for group in groups] == [
        [["sin", "add"], ["sin_1", "add_1"]]
    ]
    group = groups[0]
    for region in group:
        assert Contraction(gm.graph, {}).cycle([region]) is None
    assert Contraction(gm.graph, {}).cycle(group) == (0, "region 0 -> region 1 -> region 0")


# ---- 03 outlining ----------------------------------------------------------------------------


def _b3_block(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * 2).sum() + (b * 3).sum()


def _b3(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    outs = []
    for a, b in ((x, x), (y, z)):
        outs.append(_b3_block(a, b))
    return tuple(outs)


@pytest.mark.spec("RPL-2", "RPL-8", "RPL-13")
def test_03_exercise_1() -> None:
    """RPL-2: region 1 passes two different tensors, so the subgraph gets two placeholders.
    RPL-8: region 0 would pass `x` twice (input-input aliasing) and is refused; region 1 is
    replaced. RPL-13: the outputs still equal the original's (torch drops `z` here)."""
    g = torch.Generator().manual_seed(0)
    inputs = tuple(torch.rand(8, 8, generator=g) for _ in range(3))
    c = capture(_b3, inputs)
    result = deduplicate(c.gm, c.tracker)
    body = result.subgraphs["subgraph_0"]
    assert [n.name for n in body.graph.nodes if n.op == "placeholder"] == [
        "subgraph_input_l_x_",
        "subgraph_input_l_x__1",
    ]
    assert [(r.region, r.reason) for r in result.refused] == [(0, Refusal.ALIASING)]
    assert [r.region for r in result.replaced] == [1]
    torch.testing.assert_close(c.gm(*inputs), _b3(*inputs))


def _d1_inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x + 1).sum() + (y + 2).sum()


def _d1(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    _d1_inner(x, y)
    o1 = torch.sin(y)
    o2 = _d1_inner(x, o1)
    o3 = _d1_inner(x, y)
    return o2 * (o3 * o3)


@pytest.mark.spec("RPL-15")
def test_03_exercise_2() -> None:
    """RPL-15: the second run finds the replaced regions gone (their nodes are erased) and
    replaces nothing; the code is unchanged, character for character."""
    c = capture(_d1, (torch.rand(10, 10), torch.rand(10, 20)))
    first = deduplicate(c.gm, c.tracker)
    assert [r.region for r in first.replaced] == [0, 1, 2]
    code = c.gm.code
    second = deduplicate(c.gm, c.tracker)
    assert (second.replaced, second.refused, dict(second.subgraphs)) == ((), (), {})
    assert c.gm.code == code


def _constant_regions(x: torch.Tensor) -> torch.Tensor:
    outs = [x]
    for _ in range(2):
        outs.append(torch.ones(3).sin().cos())
    return outs[0] + outs[1] * outs[2]


@pytest.mark.spec("RPL-5")
def test_03_exercise_3() -> None:
    """RPL-5: expansion finds the group `[ones, sin, cos]` twice, but region 0 has no external
    input: the replacer refuses the whole group and installs no subgraph."""
    c = capture(_constant_regions, (torch.rand(3),))
    groups = find_identical_regions(c.gm.graph, c.tracker)
    assert [[[n.name for n in r] for r in group] for group in groups] == [
        [["ones", "sin", "cos"], ["ones_1", "sin_1", "cos_1"]]
    ]
    result = deduplicate(c.gm, c.tracker)
    assert [(r.region, r.reason) for r in result.refused] == [(None, Refusal.NO_INPUTS)]
    assert not result.subgraphs and not hasattr(c.gm, "subgraph_0")


# ---- 04 sort ---------------------------------------------------------------------------------
