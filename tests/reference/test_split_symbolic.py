"""Symbolic sizes across partitions: S10, unbacked symbols, B9 and the self-bound symbol (spec
chapter 05, SPL-6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import pytest
import torch
import torch.fx
from torch.fx.passes.split_module import split_module as torch_split

from reference.errors import FxOracleError
from reference.split import split_module
from reference.split.plan import plan_split
from tests.support.split_cases import (
    assert_same_results,
    call_names,
    callback,
    capture,
    module_form,
)


def names_of(plan_nodes: Sequence[int], gm: torch.fx.GraphModule) -> list[str]:
    nodes = list(gm.graph.nodes)
    return [nodes[i].name for i in plan_nodes]


def moe(x: torch.Tensor, gate: torch.Tensor, experts: torch.Tensor) -> torch.Tensor:
    """S10: MoE gating; `tolist()` breaks the graph, so each piece is split separately."""
    top = (x @ gate).argmax(-1)
    counts = torch.bincount(top, minlength=experts.shape[0]).tolist()
    out = torch.zeros_like(x)
    for e, count in enumerate(counts):
        if count:
            mask = (top == e).unsqueeze(-1)
            out = out + torch.where(mask, torch.relu(x @ experts[e]), 0.0)
    return out


@pytest.mark.spec("SPL-8", "SPL-13")
def test_s10_symint_dependency_through_compile_backend() -> None:
    splits: list[int] = []

    def backend(gm: torch.fx.GraphModule, _: Sequence[Any]) -> Callable[..., Any]:
        memo: dict[str, int] = {}

        def every_five(node: torch.fx.Node) -> int:  # memoized: the id of a node never changes
            return memo.setdefault(node.name, len(memo) // 5)

        split = split_module(gm, None, every_five, None, True, True)
        splits.append(len(split.meta["partition_names"]))
        return split.forward

    torch.manual_seed(0)
    x, gate, experts = torch.randn(6, 4), torch.randn(4, 3), torch.randn(3, 4, 4)
    torch._dynamo.reset()
    compiled = torch.compile(moe, backend=backend)
    torch.testing.assert_close(compiled(x, gate, experts), moe(x, gate, experts))
    assert len(splits) >= 2  # the graph breaks at tolist()


def unbacked(x: torch.Tensor, n: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    k = cast(int, n.item())
    check = cast(Callable[[bool], None], torch._check)  # torch._check is untyped
    check(k >= 0)
    check(k <= 8)
    z = torch.ones(k) * 3
    return (z + 1).sum() + x.sum(), z


@pytest.mark.spec("SPL-6")
def test_unbacked_symbol_definer_becomes_an_output_of_its_partition() -> None:
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        case = capture("unbacked", unbacked, torch.randn(4), torch.tensor(3))
    names = call_names(case.gm)
    ids = {n: 0 if i < 2 else 1 if i < len(names) - 3 else 2 for i, n in enumerate(names)}
    plan = plan_split(case.gm, callback(ids))
    # `add` (size s33) crosses from 1 to 2 and brings its size's binder, `item`, from 0
    assert names_of(plan.partition(plan.order[0]).outputs, case.gm) == ["ge", "item"]
    assert names_of(plan.partition(plan.order[2]).inputs, case.gm) == ["add", "item", "l_x_"]
    split = split_module(case.gm, None, callback(ids))
    assert module_form(split) == module_form(torch_split(case.gm, case.gm, callback(ids)))
    assert_same_results(case.gm(*case.inputs), split(*case.inputs))


def nonzero_model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    n = torch.nonzero(x)
    return (n.float() * 2).sum(), torch.tensor(n.shape[0] * 2)


def nonzero_case() -> Any:
    flags = {"capture_dynamic_output_shape_ops": True, "capture_scalar_outputs": True}
    with torch._dynamo.config.patch(flags):
        return capture("nonzero", nonzero_model, torch.tensor([1.0, 0.0, 2.0]))


@pytest.mark.spec("SPL-6")
def test_symbol_bound_in_the_using_partition_is_not_a_cycle() -> None:
    """Upstream: torch makes the partition depend on itself and reports a false cycle."""
    case = nonzero_case()
    ids = {n: min(i, 1) for i, n in enumerate(call_names(case.gm))}  # `n` alone in 0
    with pytest.raises(RuntimeError, match="cycle exists between partitions"):
        torch_split(case.gm, case.gm, callback(ids))
    plan = plan_split(case.gm, callback(ids))
    assert names_of(plan.partition(plan.order[1]).inputs, case.gm) == ["n"]
    split = split_module(case.gm, None, callback(ids))
    assert_same_results(case.gm(*case.inputs), split(*case.inputs))


@pytest.mark.spec("SPL-6")
def test_b9_symbol_without_binder_is_skipped() -> None:
    """B9: no node binds u0 (the sym_size node lost its example value); torch: KeyError."""
    case = nonzero_case()
    for node in case.gm.graph.nodes:
        if node.name == "sym_size_int":
            del node.meta["example_value"]
    ids = {n: 0 if n == "n" else 1 for n in call_names(case.gm)}
    with pytest.raises(KeyError):
        torch_split(case.gm, case.gm, callback(ids))
    plan = plan_split(case.gm, callback(ids))
    assert names_of(plan.partition(plan.order[1]).inputs, case.gm) == ["n"]
    split = split_module(case.gm, None, callback(ids))
    assert_same_results(case.gm(*case.inputs), split(*case.inputs))


def two_sizes(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (x.sin() @ y.cos()).relu()


@pytest.mark.spec("SPL-6")
def test_symbolic_inputs_follow_the_tensor_sorted_by_name() -> None:
    case = capture("sizes", two_sizes, torch.randn(3, 5), torch.randn(5, 2), dynamic=True)
    ids = {n: i for i, n in enumerate(call_names(case.gm))}
    plan = plan_split(case.gm, callback(ids))
    matmul = plan.partition(plan.order[-2])
    inputs = names_of(matmul.inputs, case.gm)
    symbols = [n for n in inputs if n[0] == "s" and n[1:].isdigit()]
    assert inputs[0] in ("sin", "cos") and symbols == sorted(symbols) and len(symbols) >= 2
    split = split_module(case.gm, None, callback(ids))
    assert module_form(split) == module_form(torch_split(case.gm, case.gm, callback(ids)))
    assert_same_results(case.gm(*case.inputs), split(*case.inputs))


@pytest.mark.spec("SPL-1")
def test_callback_must_return_an_int() -> None:
    case = capture("sizes", two_sizes, torch.randn(3, 5), torch.randn(5, 2))
    with pytest.raises(FxOracleError, match="must return an int"):
        split_module(case.gm, None, cast(Callable[[torch.fx.Node], int], lambda _: "0"))
    with pytest.raises(FxOracleError, match="must return an int"):
        split_module(case.gm, None, lambda _: True)
