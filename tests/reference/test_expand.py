"""Unit tests of the lock-step expansion on hand-made views (spec chapter 02)."""

from __future__ import annotations

from reference.expand.lockstep import StepRefusal, expand, group_order
from tests.support.views import names, view

PH, CF = "placeholder", "call_function"


def _twice(prefix: str = "") -> list[tuple[str, str, list[str], str | None]]:
    """x -> a=f(x) -> b=g(a), twice, both chains from one placeholder."""
    rows: list[tuple[str, str, list[str], str | None]] = [("x", PH, [], None)]
    for i in range(2):
        rows += [(f"a{i}", CF, ["x"], "f"), (f"b{i}", CF, [f"a{i}"], "g")]
    return rows


def test_exp1_single_node_groups_dropped() -> None:
    """EXP-1: a bucket whose members cannot grow is not reported (T3)."""
    v = view([("x", PH, [], None), ("a", CF, ["x"], "f"), ("b", CF, ["x"], "f")])
    assert expand(v).kept_regions() == []


def test_exp1_pairs_are_kept() -> None:
    v = view(_twice())
    assert names(v, expand(v).kept_regions()) == [[["a0", "b0"], ["a1", "b1"]]]


def test_exp2_group_order() -> None:
    """EXP-2: groups by descending position of their earliest member."""
    rows = [*_twice(), ("c0", CF, ["b0"], "h"), ("c1", CF, ["b1"], "h")]
    v = view(rows)
    order = [v.names[v.buckets[b][0]] for b in group_order(v)]
    assert order == ["c0", "b0", "a0"]


def test_exp3_lockstep_all_or_none() -> None:
    """EXP-3: a refusal in region 1 keeps region 0 from growing, and queues stay aligned."""
    rows: list[tuple[str, str, list[str], str | None]] = [
        ("x", PH, [], None),
        ("p0", CF, ["x"], "p"),
        ("q0", CF, ["x"], "q"),
        ("r0", CF, ["p0", "q0"], "r"),
        ("p1", CF, ["x"], "p_other"),  # differs: refused at step 1
        ("q1", CF, ["x"], "q"),
        ("r1", CF, ["p1", "q1"], "r"),
    ]
    v = view(rows)
    group = expand(v).groups[0]
    assert [s.accepted for s in group.steps] == [False, True, False]
    assert group.steps[0].reason is StepRefusal.DIFFERENT and group.steps[0].refused_region == 1
    assert names(v, [group.regions]) == [[["q0", "r0"], ["q1", "r1"]]]


def test_exp3_exhausted_queue_refuses() -> None:
    rows = [("x", PH, [], None), ("y", CF, ["x"], "y"), ("a", CF, ["y"], "f"), ("b", CF, [], "f")]
    v = view(rows)
    steps = expand(v).groups[0].steps
    assert [s.reason for s in steps] == [StepRefusal.EXHAUSTED]


def test_exp4_groups_disjoint_b4() -> None:
    """EXP-4: B4's overlapping groups become disjoint: a claimed root leaves its group."""
    rows: list[tuple[str, str, list[str], str | None]] = [("x", PH, [], None)]
    rows += [(f"exp{i}", CF, ["x"], "exp") for i in range(3)]
    rows += [("sin0", CF, ["exp0"], "sin")]
    for i in (1, 2):
        rows += [
            (f"neg{i}", CF, [f"exp{i}"], f"neg{i}"),
            (f"sin{i}", CF, [f"exp{i}"], "sin"),
            (f"add{i}", CF, [f"sin{i}", f"neg{i}"], "add"),
        ]
    v = view(rows)
    kept = names(v, expand(v).kept_regions())
    assert kept == [[["sin1", "add1"], ["sin2", "add2"]]]
    claimed = [g.claimed_roots for g in expand(v).groups if g.claimed_roots]
    assert [[v.names[i] for i in c] for c in claimed] == [["sin1", "sin2"]]


def test_exp5_inputs_never_join() -> None:
    """EXP-5: placeholders and get_attr are refused even when bucketed together."""
    rows: list[tuple[str, str, list[str], str | None]] = [
        ("w0", "get_attr", [], "w"),
        ("w1", "get_attr", [], "w"),
        ("a0", CF, ["w0"], "f"),
        ("a1", CF, ["w1"], "f"),
    ]
    v = view(rows)
    group = expand(v).groups[0]
    assert group.steps[0].reason is StepRefusal.INPUT and not group.kept


def test_exp7_shared_ancestor_stays_external() -> None:
    """EXP-7: one node reached by both regions in one step joins neither."""
    rows: list[tuple[str, str, list[str], str | None]] = [
        ("x", PH, [], None),
        ("s", CF, ["x"], "s"),
        ("a0", CF, ["s"], "f"),
        ("a1", CF, ["s"], "f"),
    ]
    v = view(rows)
    group = expand(v).groups[0]
    assert group.steps[0].reason is StepRefusal.SHARED and not group.kept


def test_exp8_cycle_refused() -> None:
    """EXP-8: `a=head(x); e=a*3; r=tail(a,e)` twice: `a` is refused (e uses it and feeds r)."""
    rows: list[tuple[str, str, list[str], str | None]] = [("x", PH, [], None)]
    for i in range(2):
        rows += [
            (f"a{i}", CF, ["x"], "head"),
            (f"add{i}", CF, [f"a{i}"], "add"),
            (f"e{i}", CF, [f"a{i}"], f"e{i}"),
            (f"r{i}", CF, [f"add{i}", f"e{i}"], "tail"),
        ]
    v = view(rows)
    group = expand(v).groups[0]
    assert names(v, [group.regions]) == [[["add0", "r0"], ["add1", "r1"]]]
    assert StepRefusal.CYCLE in [s.reason for s in group.steps]


def test_exp9_sort_with_reference_region() -> None:
    """EXP-9 (T12): positions permuted by region 0's order, the same permutation for all."""
    rows: list[tuple[str, str, list[str], str | None]] = [
        ("x", PH, [], None),
        ("p0", CF, ["x"], "p"),
        ("q0", CF, ["x"], "q"),
        ("r0", CF, ["q0", "p0"], "r"),
        ("q1", CF, ["x"], "q"),
        ("p1", CF, ["x"], "p"),
        ("r1", CF, ["q1", "p1"], "r"),
    ]
    v = view(rows)
    assert names(v, expand(v).kept_regions()) == [[["p0", "q0", "r0"], ["p1", "q1", "r1"]]]


def test_exp10_steps_recorded() -> None:
    """EXP-10: every step is recorded, accepted or with its refusing region and reason."""
    v = view(_twice())
    groups = expand(v).groups
    assert [(len(g.steps), [s.accepted for s in g.steps]) for g in groups] == [
        (2, [True, False]),
        (0, []),
    ]
    assert [v.names[i] for i in groups[1].claimed_roots] == ["a0", "a1"]
    refused = groups[0].steps[1]
    assert refused.reason is not None and refused.reason.value.startswith("EXP-")
