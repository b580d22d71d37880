"""Where torch's split_module raises or is wrong, and the errors both report (spec chapter
05, SPL-7 to SPL-12; B6, B7, B8).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.fx
from torch import nn
from torch.fx.passes.split_module import split_module as torch_split

from reference.errors import FxOracleError
from reference.split import split_module
from reference.split.plan import plan_split
from tests.support.split_cases import (
    StateRegions,
    assert_same_results,
    b6_model,
    call_names,
    callback,
    capture,
    module_form,
)


@pytest.mark.spec("SPL-11")
def test_b6_grad_mode_does_not_leak_into_earlier_partitions() -> None:
    x = torch.randn(3, requires_grad=True)
    case = capture("b6", b6_model, x)
    ids = {n: i for i, n in enumerate(call_names(case.gm))}  # one node per partition
    eager = b6_model(x)
    wrong = torch_split(case.gm, case.gm, callback(ids))(*case.inputs)
    assert wrong[1].requires_grad is False and eager[1].requires_grad is True
    plan = plan_split(case.gm, callback(ids))
    assert plan.order == (0, 1, 2, 3, 4) and plan.upstream_order == (3, 1, 0, 2, 4)
    assert_same_results(eager, split_module(case.gm, None, callback(ids))(*case.inputs))
    kept = split_module(case.gm, None, callback(ids), keep_original_order=True)
    expected = torch_split(case.gm, case.gm, callback(ids), keep_original_order=True)
    assert module_form(kept) == module_form(expected)
    assert_same_results(eager, kept(*case.inputs))


@pytest.mark.spec("SPL-9", "SPL-11")
def test_preludes_and_epilogues_replicate_state_in_every_spanned_partition() -> None:
    x = torch.randn(4, 8, requires_grad=True)
    model = StateRegions()
    case = capture("state", model, x)
    ids = {n: i // 3 for i, n in enumerate(call_names(case.gm))}
    split = split_module(case.gm, None, callback(ids))
    assert module_form(split) == module_form(torch_split(case.gm, case.gm, callback(ids)))
    plan = plan_split(case.gm, callback(ids))
    nodes = list(case.gm.graph.nodes)
    preludes = {p.pid: [nodes[i].name for i in p.preludes] for p in plan.partitions}
    epilogues = {p.pid: [nodes[i].name for i in p.epilogues] for p in plan.partitions}
    assert preludes == {
        0: [],
        1: ["_set_grad_enabled"],
        2: [],
        3: ["_enter_autocast", "_set_grad_enabled_1"],
        4: ["_set_grad_enabled_1"],
    }
    assert epilogues == {0: [], 1: [], 2: ["_enter_autocast"], 3: [], 4: []}
    assert_same_results(model(x), split(*case.inputs))


class B7Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = x + 1
        b = y * 2
        return a + b


@pytest.mark.spec("SPL-8")
def test_b7_keep_original_order_is_topological() -> None:
    traced = torch.fx.symbolic_trace(B7Model())
    ids = {"add": 1, "mul": 0, "add_1": 1}
    with pytest.raises(KeyError, match="mul"):
        torch_split(traced, traced, callback(ids), keep_original_order=True)
    plan = plan_split(traced, callback(ids), keep_original_order=True)
    assert (plan.upstream_order, plan.order) == ((1, 0), (0, 1))
    split = split_module(traced, None, callback(ids), keep_original_order=True)
    x, y = torch.rand(2), torch.rand(2)
    torch.testing.assert_close(split(x, y), x + 1 + y * 2)
    default = split_module(traced, None, callback(ids))
    assert module_form(default) == module_form(torch_split(traced, traced, callback(ids)))


class ParamOut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.p = nn.Parameter(torch.ones(2))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 2 + 1, self.p


@pytest.mark.spec("SPL-12")
def test_get_attr_used_only_by_the_output_exists_in_the_base_graph() -> None:
    model = ParamOut()
    traced = torch.fx.symbolic_trace(model)
    ids = {"mul": 0, "add": 1}
    with pytest.raises(KeyError):
        torch_split(traced, traced, callback(ids), keep_original_order=True)
    split = split_module(traced, None, callback(ids), keep_original_order=True)
    x = torch.rand(2)
    torch.testing.assert_close(split(x), model(x))
    default = split_module(traced, None, callback(ids))
    assert module_form(default) == module_form(torch_split(traced, traced, callback(ids)))
    assert [n.op for n in default.graph.nodes][:2] == ["placeholder", "get_attr"]


@pytest.mark.spec("SPL-2")
def test_affix_names_submodules_also_with_global_state() -> None:
    x = torch.randn(3, requires_grad=True)
    case = capture("b6", b6_model, x)
    ids = {n: 7 * (i // 2) for i, n in enumerate(call_names(case.gm))}  # sparse ids
    with pytest.raises(KeyError):  # torch looks regions up without the affix
        torch_split(case.gm, case.gm, callback(ids), partition_affix="pp")
    split = split_module(case.gm, None, callback(ids), partition_affix="pp")
    assert split.meta["partition_names"] == {"submod_pp_0", "submod_pp_7", "submod_pp_14"}
    assert_same_results(b6_model(x), split(*case.inputs))


@pytest.mark.spec("SPL-10")
def test_b8_decreasing_ids_with_global_state_are_refused_like_torch() -> None:
    case = capture("b6", b6_model, torch.randn(3, requires_grad=True))
    ids = {n: i % 2 for i, n in enumerate(call_names(case.gm))}
    message = "autocast or set_grad_enabled require monotonically increasing partitions"
    with pytest.raises(AssertionError, match=message):
        torch_split(case.gm, case.gm, callback(ids))
    with pytest.raises(FxOracleError, match=f"{message}: highest: 1, this node's: 0"):
        split_module(case.gm, None, callback(ids))


@pytest.mark.spec("SPL-7")
def test_cycle_between_partitions_is_reported_with_the_cycle() -> None:
    traced = torch.fx.symbolic_trace(B7Model())
    ids = {"add": 0, "mul": 1, "add_1": 0}
    graph = traced.graph
    (add_1,) = (n for n in graph.nodes if n.name == "add_1")
    with graph.inserting_after(add_1):
        last = graph.call_function(operator.mul, (add_1, 2))
    add_1.replace_all_uses_with(last, delete_user_cb=lambda user: user is not last)
    traced.recompile()
    ids["mul_1"] = 1  # add(0) -> add_1(0) -> mul_1(1), mul(1) -> add_1(0): a cycle
    with pytest.raises(RuntimeError, match="cycle exists between partitions!"):
        torch_split(traced, traced, callback(ids))
    with pytest.raises(FxOracleError, match=r"cycle exists between partitions! partitions 0 -> 1"):
        split_module(traced, None, callback(ids))


@pytest.mark.spec("SPL-7")
def test_a_long_partition_cycle_is_one_error_not_a_recursion_error() -> None:
    """A chain of 1,500 partitions closed back to partition 0: the iterative cycle search."""
    graph = torch.fx.Graph()
    node = graph.placeholder("x")
    ids: dict[str, int] = {}
    for partition in [*range(1500), 0]:  # partition 0 also reads the last one
        node = graph.call_function(torch.add, (node, 1))
        ids[node.name] = partition
    graph.output((node,))
    gm = torch.fx.GraphModule(nn.Module(), graph)
    with pytest.raises(FxOracleError, match=r"partitions 0 -> 1 -> 2 -> .* -> 1499 -> 0$"):
        split_module(gm, None, callback(ids))


def _state_graph(target: Callable[..., Any], args: tuple[Any, ...]) -> torch.fx.GraphModule:
    """`x -> target(*args); return sin(x)`: one global-state call with constant arguments."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(target, args)
    graph.output(graph.call_function(torch.sin, (x,)))
    return torch.fx.GraphModule(nn.Module(), graph)


@pytest.mark.spec("SPL-9")
def test_malformed_global_state_calls_are_bad_input() -> None:
    enter = torch.amp.autocast_mode._enter_autocast
    unclosed = _state_graph(enter, ("cpu", torch.bfloat16, True, None))
    with pytest.raises(FxOracleError, match="autocast must exit"):
        split_module(unclosed, None, lambda _: 0)
    with pytest.raises(AssertionError, match="autocast must exit"):
        torch_split(unclosed, unclosed, lambda _: 0)
    not_bool = _state_graph(torch._C._set_grad_enabled, ("yes",))
    with pytest.raises(FxOracleError, match="one Python bool"):
        split_module(not_bool, None, lambda _: 0)
