"""Unit tests of the replacer's invariants (spec chapter 03)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

import pytest
import torch
import torch.fx

from reference.dynamo.capture import Capture, capture, fresh_inputs
from reference.effects.alias_db import AliasDB
from reference.pipeline import deduplicate, outline_groups
from reference.replace.legality import Refusal, Ruling, Veto
from reference.replace.outliner import DedupResult
from reference.replace.plan import OutlinePlan, plan_outline
from reference.track.tracker import GraphRegionTracker
from tests.reference.test_deps import by_name
from tests.support.corpus import CORPUS_DIR, load_model_file

Node = torch.fx.Node


def _corpus(stem: str) -> Capture:
    model_file = load_model_file(CORPUS_DIR / f"{stem}.py")
    return capture(model_file.model, model_file.example_inputs, model_file.dynamic)


def _reasons(result: DedupResult) -> list[tuple[int, int | None, Refusal]]:
    return [(r.group, r.region, r.reason) for r in result.refused]


def _placeholders(gm: torch.fx.GraphModule) -> list[str]:
    return [n.name for n in gm.graph.nodes if n.op == "placeholder"]


def _inner(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x + 1).sum() + (y + 2).sum()


def _t1(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _inner(x, y) * _inner(x, torch.sin(y)) + _inner(x, y)


def test_rpl1_subgraph_layout() -> None:
    """RPL-1: placeholders in first-use order, region 0's body, a tuple output, get_attr first."""
    c = capture(_t1, (torch.rand(4, 4), torch.rand(4, 5)))
    result = deduplicate(c.gm, c.tracker)
    sub = result.subgraphs["subgraph_0"]
    assert _placeholders(sub) == ["subgraph_input_l_x_", "subgraph_input_l_y_"]
    (out,) = [n for n in sub.graph.nodes if n.op == "output"]
    assert isinstance(out.args[0], tuple) and len(out.args[0]) == 1
    first = next(iter(c.gm.graph.nodes))
    assert (first.op, first.target) == ("get_attr", "subgraph_0")
    assert [r.subgraph for r in result.replaced] == ["subgraph_0"] * 3


def test_rpl2_shared_input_b3() -> None:
    """RPL-2 (B3): usages shared in region 0 but not in region 1 get two placeholders."""
    c = _corpus("b3_shared_input")
    result = deduplicate(c.gm, c.tracker)
    sub = result.subgraphs["subgraph_0"]
    assert _placeholders(sub) == ["subgraph_input_l_x_", "subgraph_input_l_x__1"]
    assert _reasons(result) == [(0, 0, Refusal.ALIASING)]  # (x, x) aliases: RPL-8
    (call,) = [n for n in c.gm.graph.nodes if n.target is torch.ops.higher_order.invoke_subgraph]
    assert [a.name for a in call.args[2:]] == ["l_y_", "l_z_"]


def test_rpl3_outputs_union_and_tuples() -> None:
    """RPL-3: a position used outside in any region is an output of every call; tuples flatten."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    regions = []
    for _ in range(2):
        a = g.call_function(torch.sin, (x,))
        b = g.call_function(torch.cos, (a,))
        regions.append([a, b])
    leak = g.call_function(torch.neg, (regions[1][0],))  # only region 1's `a` is used outside
    g.output((regions[0][1], regions[1][1], leak))
    assert plan_outline(regions).outputs == (0, 1)
    c = _corpus("d16_tuple_return")
    result = deduplicate(c.gm, c.tracker)
    (sub,) = result.subgraphs.values()
    (out,) = [n for n in sub.graph.nodes if n.op == "output"]
    items = [(n.args[0].name, n.args[1]) for n in out.args[0] if n.target is operator.getitem]
    assert items[:2] == [("pair", 0), ("pair", 1)], "the tuple is flattened breadth-first"


def test_rpl5_no_inputs_skips_group() -> None:
    """RPL-5: a region computed from constants only is not outlined; nothing is installed."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        outs = [x]
        for _ in range(2):
            outs.append(torch.ones(3).sin().cos())
        return outs[0] + outs[1] * outs[2]

    c = capture(fn, (torch.rand(3),))
    result = deduplicate(c.gm, c.tracker)
    assert [r.reason for r in result.refused] == [Refusal.NO_INPUTS]
    assert not result.subgraphs and not hasattr(c.gm, "subgraph_0")


def _block(x: torch.Tensor, other: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    a = x + 1
    return a * other(a)  # one multiply instruction, whatever `other` picks (TRK-3)


def test_rpl6_wiring_mismatch_refused() -> None:
    """RPL-6: equal keys, different wiring: region 1 multiplies `a` by itself, not by `y`. The
    operand is picked by the caller: `a * (a if use_self else y)` compiles, from Python 3.12 on,
    to one multiply per branch, two call sites that never share a key (TRK-3)."""

    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _block(x, lambda a: y) + _block(x, lambda a: a)

    x, y = torch.rand(3), torch.rand(3)
    c = capture(fn, (x, y))
    want = c.gm(x, y)
    result = deduplicate(c.gm, c.tracker)
    assert _reasons(result) == [(0, 1, Refusal.WIRING)]
    torch.testing.assert_close(c.gm(x, y), want)


def test_rpl7_input_mutation_refused() -> None:
    """RPL-7 (D5): regions that mutate an external input stay as they are."""
    result = deduplicate(*_gm_and_tracker("d05_input_mutation"))
    mutated = [r for r in result.refused if r.reason is Refusal.MUTATED_INPUT]
    assert len(mutated) == 4 and all(" writes " in r.detail for r in mutated)


def test_rpl8_aliasing_refused() -> None:
    """RPL-8 (D6): view chains alias their input and are refused."""
    result = deduplicate(*_gm_and_tracker("d06_input_aliasing"))
    assert [r.reason for r in result.refused] == [Refusal.ALIASING, Refusal.ALIASING]
    assert len(result.replaced) == 2


def _halves_of_inputs(*xs: torch.Tensor) -> torch.Tensor:
    a, b = xs[1].chunk(2, dim=-1)
    h = xs[0] * a
    for t in xs[2:]:
        h = h + b  # the previous chunk's half: `b` leaves the region that chunks `t`
        a, b = t.chunk(2, dim=-1)
        h = h * a
    return h + b


def test_rpl8_a_tuple_output_viewing_an_operand_is_refused() -> None:
    """RPL-8 beyond torch's checks: a region returning `t.chunk(2)` of its operand `t` (a tuple
    the call returns) would alias its operand (CHK-18); torch's checks skip tuple outputs."""
    inputs = (torch.randn(2, 4), *(torch.randn(2, 8) for _ in range(3)))
    c = capture(_halves_of_inputs, inputs)
    result = deduplicate(c.gm, c.tracker)
    assert {r.reason for r in result.refused} == {Refusal.ALIASING}, result.refused
    assert any("and output chunk" in r.detail for r in result.refused), result.refused
    assert not result.replaced


def test_rpl9_mutation_between_region_nodes_b13() -> None:
    """RPL-9 (B13): `t.add_(1)` outside the region lies between `t = h*3` and `t * h`."""
    result = deduplicate(*_gm_and_tracker("own_inplace_inside"))
    assert {r.reason for r in result.refused} == {Refusal.SPLIT_MUTATION}
    assert not result.replaced


def _gm_and_tracker(stem: str) -> tuple[torch.fx.GraphModule, GraphRegionTracker]:
    c = _corpus(stem)
    return c.gm, c.tracker


def test_rpl10_facts_handed_over() -> None:
    """RPL-10, EFF-7: the getitem that replaces a region output takes over its storage class,
    so a write through a later view of it is still a write of that class."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.zeros(2)
    a = g.call_function(torch.sin, (x,))
    a.meta["example_value"] = torch.zeros(2)
    w = g.call_method("add_", (a, 1))
    w.meta["example_value"] = a.meta["example_value"]
    g.output(w)
    db = AliasDB(g, {w: [0]})
    assert db.writers(next(iter(db.classes(a)))) == [w] and db.classes(w) == db.classes(a)
    with g.inserting_after(a):
        call = g.call_function(torch.ops.higher_order.invoke_subgraph, (x, "s", x))
        item = g.call_function(operator.getitem, (call, 0))
    call.meta["example_value"] = (a.meta["example_value"],)
    a.replace_all_uses_with(item, propagate_meta=True)
    g.erase_node(a)
    db.replaced([a], call, [(a, item)])
    assert db.classes(item) == db.classes(w) and db.writers(next(iter(db.classes(item)))) == [w]


def test_rpl11_gate_veto_leaves_graph() -> None:
    """RPL-11: a vetoed group is refused with the gate's reason and the graph is unchanged."""
    c = capture(_t1, (torch.rand(4, 4), torch.rand(4, 5)))
    code = c.gm.code
    seen: list[int] = []

    def veto(group: Sequence[Sequence[Node]], plan: OutlinePlan) -> Ruling:
        seen.append(len(group))
        return Veto(Refusal.GATE, "CHK-1: not proved (test)", 1)

    result = deduplicate(c.gm, c.tracker, gate=veto)
    assert seen == [3] and not result.replaced
    assert [(r.reason, r.detail) for r in result.refused] == [
        (Refusal.GATE, "CHK-1: not proved (test)")
    ]
    assert c.gm.code == code


def test_rpl12_no_reference_to_erased_nodes() -> None:
    """RPL-12: after replacement the graph lints, no region node survives, deps name live nodes."""
    c = _corpus("d15_mutation_ordering")
    groups = c.tracker.get_identical_regions(c.gm.graph)
    region_nodes = {n for g in groups for r in g for n in r}
    result = deduplicate(c.gm, c.tracker)
    c.gm.graph.lint()
    live = set(c.gm.graph.nodes)
    replaced = {name for r in result.replaced for name in r.nodes}
    assert replaced and not any(n in live for n in region_nodes if n.name in replaced)
    for node, deps in result.extra_deps.items():
        assert node in live and all(d in live for d in deps)


def _r1_block(h: torch.Tensor, s: float) -> torch.Tensor:
    t = h * 1.5
    a, b = t.chunk(2, dim=-1)
    t = torch.cat([b * s, a], dim=-1)
    return t + h


def _r1(x0: torch.Tensor) -> torch.Tensor:
    h1 = _r1_block(_r1_block(x0, 0.5), 3.0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        pass
    return h1


def test_rpl12_erased_getitem_outside_the_region_keeps_its_deps() -> None:
    """RPL-12 (fuzz finding R1): replacing a tuple output erases its getitems, also one that an
    earlier group kept outside as an operand; its autocast pin moves to the new getitem."""
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    c = capture(_r1, (x,), dynamic=True)
    want = c.gm(*fresh_inputs(c.example_inputs))
    result = deduplicate(c.gm, c.tracker)
    assert len(result.replaced) == 4 and not result.refused
    torch.testing.assert_close(c.gm(*fresh_inputs(c.example_inputs)), want)


def _r2_block(h: torch.Tensor, f: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    return f(h).sigmoid()


def _r2(x0: torch.Tensor, x1: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h1 = _r2_block(_r2_block(x0, torch.cos), torch.sin)
    with torch.no_grad():
        h2 = _r2_block(x1, torch.cos)
    return _r2_block(h1, torch.sin), h2


def test_rpl16_region_spanning_a_grad_switch_is_refused() -> None:
    """RPL-16 (fuzz finding R2): a region whose nodes lie on both sides of a pinned grad switch
    cannot become one call without a cycle, so it is refused instead of failing the sort."""
    x0, x1 = torch.randn(4, 8), torch.randn(4, 8)
    c = capture(_r2, (x0, x1))
    want = c.gm(x0, x1)
    result = deduplicate(c.gm, c.tracker)
    assert [r.reason for r in result.refused] == [Refusal.SPANS_PIN]
    assert "_set_grad_enabled" in result.refused[0].detail
    torch.testing.assert_close(c.gm(x0, x1), want)


def _sizes(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    s, t = (x * 2).size(), (y * 2).size()
    return x.reshape(-1).view(s) + 1, y.reshape(-1).view(t) + 1


def test_rpl18_tuple_output_used_whole_outside_is_refused() -> None:
    """RPL-18 (fuzz finding R4, `random_15_101`): `size = a.size()` is a tuple output of the
    region `[a, size]` and `view(reshape, size)` outside uses it whole; a call returns only its
    elements, so the region is refused instead of erasing `size` under its user (torch's N1)."""
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    c = capture(_sizes, (x, y), dynamic=True)
    before = c.gm.code
    n = by_name(c.gm.graph)
    group = [[n["mul"], n["size"]], [n["mul_1"], n["size_1"]]]
    result = outline_groups(c.gm, [group], {})
    assert [(r.region, r.reason, r.detail) for r in result.refused] == [
        (0, Refusal.WHOLE_TUPLE, "view uses size whole"),
        (1, Refusal.WHOLE_TUPLE, "view_1 uses size_1 whole"),
    ]
    assert c.gm.code == before and not result.replaced


@pytest.mark.spec("RPL-18")
def test_rpl18_a_tuple_used_whole_inside_goes_with_its_region() -> None:
    """Fuzz finding R5 (`random_0_8`): `size = h.size()` is an output (its dead getitems are
    outside) and `view(reshape, size)` inside the region uses it whole; the reference used to
    erase `size` with its getitems, before the `view` (torch's N1 crash)."""
    c = _corpus("own_shape_used_whole_inside")
    before = c.gm(*fresh_inputs(c.example_inputs))
    result = deduplicate(c.gm, c.tracker)
    assert [r.region for r in result.replaced] == [0, 1, 2] and not result.refused
    torch.testing.assert_close(c.gm(*fresh_inputs(c.example_inputs)), before)
