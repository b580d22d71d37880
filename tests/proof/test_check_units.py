"""Unit tests of the checker's obligations on small hand-made graphs (spec chapter 06, CHK).

Each test builds an original with `symbolic_trace`, a transformation of it (by `outline_groups`
with hand-picked regions, or by hand), and states the verdict it expects.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import cast

import pytest
import torch
import torch.fx

from checker.proof.check import check_transformation
from checker.proof.flat import flatten
from checker.proof.report import (
    ACYCLIC,
    DATAFLOW,
    NUMBERS,
    ORDERING,
    RUNTIME,
    SHAPES,
    WELL_FORMED,
)
from checker.proof.verdict import Holds, Unknown, Violated
from reference.errors import FxOracleError
from reference.graph_copy import copy_graph_module
from reference.pipeline import outline_groups
from tests.reference.test_deps import by_name

Node = torch.fx.Node


def twice(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a = torch.sin(x) * 2
    b = torch.sin(y) * 2
    return a - b


INPUTS = (torch.randn(4, 3, generator=torch.Generator().manual_seed(1)), torch.ones(4, 3))


def outlined(fn: Callable[..., torch.Tensor], picks: Sequence[Sequence[str]]) -> tuple[
    torch.fx.GraphModule, torch.fx.GraphModule
]:  # fmt: skip
    """(original, copy with the regions named by `picks` outlined as one group)."""
    original = torch.fx.symbolic_trace(fn)
    transformed = copy_graph_module(original).gm
    nodes = by_name(transformed.graph)
    group = [[nodes[name] for name in region] for region in picks]
    outline_groups(transformed, [group], {})
    return original, transformed


def pair() -> tuple[torch.fx.GraphModule, torch.fx.GraphModule]:
    return outlined(twice, [["sin", "mul"], ["sin_1", "mul_1"]])


def node(gm: torch.fx.GraphModule, name: str) -> Node:
    found: Node = next(n for n in gm.graph.nodes if n.name == name)
    return found


def child(gm: torch.fx.GraphModule, name: str) -> torch.fx.GraphModule:
    found = getattr(gm, name)
    assert isinstance(found, torch.fx.GraphModule)
    return found


@pytest.mark.spec("CHK-3")
def test_chk3_flatten_inlines_every_call_back_into_the_original_nodes() -> None:
    original, transformed = pair()
    ours, theirs = flatten(original), flatten(transformed)
    assert [n.target for n in theirs.nodes] == [n.target for n in ours.nodes]
    assert [n.name for n in theirs.nodes] == [
        "x",
        "y",
        "invoke_subgraph/sin",
        "invoke_subgraph/mul",
        "invoke_subgraph_1/sin",
        "invoke_subgraph_1/mul",
        "sub",
    ]


@pytest.mark.spec("CHK-7")
def test_chk7_a_correct_outlining_holds_everywhere() -> None:
    """CHK-7: ok only when every obligation holds; here all seven do."""
    original, transformed = pair()
    report = check_transformation(original, transformed, INPUTS)
    assert report.ok, report.render_text()
    assert [o.id for o in report.obligations] == [f"CHK-{i}" for i in (1, 2, 3, 4, 5, 6, 17)]
    assert report.violations == () and report.unknowns == ()


@pytest.mark.spec("CHK-7")
def test_chk7_unknown_is_not_ok_and_listed_apart() -> None:
    """CHK-7: without example inputs or metadata, numbers are unknown: the report is not ok."""
    original, transformed = pair()
    report = check_transformation(original, transformed)
    assert not report.ok
    assert [o.id for o in report.unknowns] == [NUMBERS, RUNTIME] and report.violations == ()
    assert report.verdict_of(NUMBERS) == Unknown(
        "CHK-6: input 0 has no tensor or size metadata (NoneType)"
    )


@pytest.mark.spec("CHK-10")
def test_chk10_json_has_stable_keys_and_round_trips() -> None:
    original, transformed = pair()
    body = child(transformed, "subgraph_0")
    node(body, "mul").args = (node(body, "sin"), 3)
    body.recompile()
    report = check_transformation(original, transformed, INPUTS)
    found = report.to_json()
    assert list(found) == ["ok", "obligations", "violations", "unknowns"]
    assert found["violations"] == [DATAFLOW, NUMBERS]
    first = report.obligations[2].to_json()
    assert list(first) == ["id", "name", "verdict", "witness", "model"]
    assert json.loads(json.dumps(found)) == found
    again = check_transformation(original, transformed, INPUTS).to_json()
    assert again == found  # deterministic, seeded


@pytest.mark.spec("CHK-1")
def test_chk1_use_before_definition_fails_lint() -> None:
    original, transformed = pair()
    node(transformed, "invoke_subgraph").prepend(node(transformed, "getitem_1"))
    verdict = check_transformation(original, transformed, INPUTS).verdict_of(WELL_FORMED)
    assert verdict == Violated(
        "CHK-1: graph: lint: Argument 'invoke_subgraph_1' of Node 'getitem_1' was used before it "
        "has been defined! Please check that Nodes in the graph are topologically ordered"
    )


@pytest.mark.spec("CHK-2")
def test_chk2_cycle_through_extra_deps_is_reported_with_its_nodes() -> None:
    """CHK-2 and CHK-8: the witness is the cycle itself, earliest node first."""
    original, transformed = pair()
    first, later = node(transformed, "getitem"), node(transformed, "sub")
    report = check_transformation(original, transformed, INPUTS, extra_deps={first: [later]})
    assert report.verdict_of(ACYCLIC) == Violated("CHK-2: graph: cycle getitem -> sub -> getitem")
    assert [o.id for o in report.violations] == [ACYCLIC]


@pytest.mark.spec("CHK-2")
def test_chk2_minimal_cycle_is_the_shortest_through_an_edge() -> None:
    """CHK-8: of a long and a short cycle through the same edge, the short one is reported."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    chain = [x]
    for _ in range(6):
        chain.append(graph.call_function(torch.sin, (chain[-1],)))
    graph.output(chain[-1])
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    deps = {chain[1]: [chain[6], chain[2]]}
    from checker.proof.acyclic import check_acyclic

    assert check_acyclic(gm, deps) == Violated("CHK-2: graph: cycle sin -> sin_1 -> sin")


@pytest.mark.spec("CHK-9")
def test_chk9_internal_failures_are_unknown_never_raised() -> None:
    """CHK-9: a call of a missing subgraph cannot be inlined: unknown, not an exception."""
    original, transformed = pair()
    node(transformed, "subgraph_0").target = "missing"
    transformed.recompile()
    report = check_transformation(original, transformed, INPUTS)
    assert isinstance(report.verdict_of(WELL_FORMED), Violated)
    dataflow = report.verdict_of(DATAFLOW)
    assert dataflow == Unknown("CHK-3: InlineError: subgraph_0: get_attr target missing does "
                               "not exist")  # fmt: skip
    assert isinstance(report.verdict_of(NUMBERS), Violated)


@pytest.mark.spec("CHK-9")
def test_chk9_bad_arguments_raise_fxoracle_error() -> None:
    original, transformed = pair()
    with pytest.raises(FxOracleError, match=r"must be a torch\.fx\.GraphModule"):
        check_transformation(original, cast(torch.fx.GraphModule, "not a module"), INPUTS)
    with pytest.raises(FxOracleError, match="timeout_ms must be positive"):
        check_transformation(original, transformed, INPUTS, timeout_ms=0)


@pytest.mark.spec("CHK-5")
def test_chk5_holds_without_metadata_on_static_calls() -> None:
    original, transformed = pair()
    assert isinstance(check_transformation(original, transformed, INPUTS).verdict_of(SHAPES), Holds)


@pytest.mark.spec("CHK-14")
def test_chk14_copy_survives_an_in_place_pass() -> None:
    original = torch.fx.symbolic_trace(twice)
    before = original.code
    copied = copy_graph_module(original)
    n = by_name(original.graph)
    group = [[n["sin"], n["mul"]], [n["sin_1"], n["mul_1"]]]
    outline_groups(original, [group], {})
    assert copied.gm.code == before
    assert [n.name for n in copied.nodes.values()] == [n.name for n in copied.gm.graph.nodes]
    report = check_transformation(copied.gm, original, INPUTS)
    assert report.ok, report.render_text()


def _grad_block(then_cos: bool) -> torch.fx.GraphModule:
    """`x -> grad off -> sin -> grad on [-> cos]`, by hand (symbolic_trace drops switches)."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch._C._set_grad_enabled, (False,))
    y = graph.call_function(torch.sin, (x,))
    graph.call_function(torch._C._set_grad_enabled, (True,))
    graph.output(graph.call_function(torch.cos, (y,)) if then_cos else y)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


@pytest.mark.spec("CHK-4")
def test_chk4_global_state_is_compared_node_by_node_and_at_the_end() -> None:
    """CHK-4: moving the closing grad switch after `cos` runs `cos` with grad mode off (the
    witness names both states); dropping the last switch of a graph hands grad mode off back to
    the caller."""
    original = _grad_block(then_cos=True)
    moved = copy_graph_module(original).gm
    by_name(moved.graph)["cos"].append(by_name(moved.graph)["_set_grad_enabled_1"])
    moved.recompile()
    assert check_transformation(original, moved).verdict_of(ORDERING) == Violated(
        "CHK-4: cos runs with grad mode True, no autocast in the original, but cos runs with "
        "grad mode False, no autocast (global state)"
    )
    assert isinstance(check_transformation(original, original).verdict_of(ORDERING), Holds)
    original = _grad_block(then_cos=False)
    dropped = copy_graph_module(original).gm
    dropped.graph.erase_node(by_name(dropped.graph)["_set_grad_enabled_1"])
    dropped.recompile()
    assert check_transformation(original, dropped).verdict_of(ORDERING) == Violated(
        "CHK-4: the original ends with grad mode True, no autocast, the transformed graph with "
        "grad mode False, no autocast (global state)"
    )
    assert isinstance(check_transformation(original, original).verdict_of(ORDERING), Holds)


def _read_around_a_write(read_after: bool, read_is_output: bool) -> torch.fx.GraphModule:
    """`a = x * 1; s = a.sum(); a.mul_(2)` (or `s` after the write); `s` an output or dead."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.mul, (x, 1))
    if read_after:
        write = g.call_method("mul_", (a, 2))
        s = g.call_method("sum", (a,))
    else:
        s = g.call_method("sum", (a,))
        write = g.call_method("mul_", (a, 2))
    g.output((write, s) if read_is_output else (write,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.spec("CHK-4", "SRT-12")
def test_chk4_a_dead_read_moved_across_a_write_is_not_a_violation() -> None:
    """The read moved after the write matters when an output uses it, not when nothing does."""
    for used in (True, False):
        report = check_transformation(
            _read_around_a_write(False, used), _read_around_a_write(True, used), (torch.ones(3),)
        )
        verdict = report.verdict_of(ORDERING)
        assert isinstance(verdict, Violated) == used, (used, verdict)
