"""torch's split_module scenarios S8-S13 (test_fx_experimental.py) and sparse ids, run on the
reference and compared with torch (spec chapter 05, SPL).
"""

from __future__ import annotations

import operator
from typing import Any, cast

import pytest
import torch
import torch.fx
from torch import nn
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.split_module import split_module as torch_split

from reference.split import split_module
from reference.torch_version import TORCH
from tests.reference.test_split_upstream_s1_s7 import S5Model
from tests.support.split_cases import module_form, output_names, placeholders, submod


class S8Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, targets: Any = None) -> torch.Tensor:
        x = self.lin(x)
        if targets is not None:
            x = x + targets
        return x


@pytest.mark.spec("SPL-12")
def test_s8_default_valued_placeholder_survives() -> None:
    model = S8Model()
    traced = torch.fx.symbolic_trace(model, concrete_args={"targets": None})
    split = split_module(traced, None, lambda _: 0)
    assert module_form(split) == module_form(torch_split(traced, traced, lambda _: 0))
    base_targets = [n for n in split.graph.nodes if n.op == "placeholder"][1]
    assert base_targets.args == (None,)
    x = torch.rand(2, 16)
    torch.testing.assert_close(split(x), model(x))


@pytest.mark.spec("SPL-12")
@pytest.mark.parametrize("keep_original_order", [False, True])
def test_s9_noop_graph_has_no_partitions(keep_original_order: bool) -> None:
    gm = make_fx(lambda x: (x,))(torch.zeros(2))
    split = split_module(gm, None, lambda _: 0, keep_original_order=keep_original_order)
    assert [n.op for n in split.graph.nodes] == ["placeholder", "output"]
    expected = torch_split(gm, gm, lambda _: 0, keep_original_order=keep_original_order)
    assert module_form(split) == module_form(expected)
    assert split.meta["partition_names"] == set()


class S11Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.branch = nn.Module()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * 2 + y


@pytest.mark.spec("SPL-4")
def test_s11_placeholders_come_before_module_get_attr() -> None:
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    branch = graph.get_attr("branch")
    y = graph.placeholder("y")
    mul = graph.call_function(operator.mul, (x, branch))
    graph.output(graph.call_function(operator.add, (mul, y)))
    gm = torch.fx.GraphModule(S11Model(), graph)
    split = split_module(gm, None, lambda _: 0, keep_original_order=True)
    ops = [(n.op, n.name) for n in submod(split, "submod_0").graph.nodes]
    inputs = [("placeholder", "x"), ("placeholder", "y"), ("get_attr", "branch")]
    if not TORCH.split_attrs_last:  # torch 2.11, 2.12: all inputs in first-use order
        inputs = [inputs[0], inputs[2], inputs[1]]
    assert ops == [
        *inputs,
        ("call_function", "mul"),
        ("call_function", "add"),
        ("output", "output"),
    ]
    expected = torch_split(gm, gm, lambda _: 0, keep_original_order=True)
    assert module_form(split) == module_form(expected)


class S12Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, a: Any, b: Any, c: Any, d: Any) -> Any:
        add_1 = a + b
        add_2 = add_1 + c
        linear_1 = self.lin(add_1)
        add_3 = add_2 + d
        add_4 = add_2 + linear_1
        return add_3 + add_4


@pytest.mark.spec("SPL-4", "SPL-3")
def test_s12_no_name_clash_between_placeholders_and_copied_nodes() -> None:
    model = S12Model()
    traced = torch.fx.symbolic_trace(model)
    split = split_module(traced, None, lambda n: 0 if n.name == "add" else 1)
    expected = torch_split(traced, traced, lambda n: 0 if n.name == "add" else 1)
    assert module_form(split) == module_form(expected)
    assert placeholders(submod(split, "submod_0")) == ["a", "b"]
    assert output_names(submod(split, "submod_0")) == "add"
    assert placeholders(submod(split, "submod_1")) == ["add", "c", "d"]
    args = [torch.rand(4) for _ in range(4)]
    torch.testing.assert_close(split(*args), model(*args))


class S13Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mm_param = nn.Parameter(torch.randn(4, 4))
        self.mm_param2 = nn.Parameter(torch.randn(4, 4))
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(torch.mm(x, self.mm_param))
        x = torch.mm(x, self.mm_param)
        x = torch.relu(self.lin(x))
        x = torch.mm(x, self.mm_param2)
        return cast(torch.Tensor, self.lin(x))


@pytest.mark.spec("SPL-14", "SPL-4")
def test_s13_qualname_map_names_call_modules() -> None:
    model = S13Model()
    traced = torch.fx.symbolic_trace(model)
    part = [0]

    def at_lin(node: torch.fx.Node) -> int:  # the id increments at each `lin`
        if node.op == "call_module" and node.target == "lin":
            part[0] += 1
        return part[0]

    qualnames: dict[str, str] = {}
    split = split_module(traced, None, at_lin, qualnames)
    assert qualnames == {"submod_1.lin": "lin", "submod_2.lin": "lin"}
    assert placeholders(submod(split, "submod_0")) == ["x", "mm_param"]
    assert placeholders(submod(split, "submod_1")) == ["mm_1", "mm_param2"]
    assert placeholders(submod(split, "submod_2")) == ["mm_2"]
    x = torch.rand(2, 4)
    torch.testing.assert_close(split(x), model(x))


@pytest.mark.spec("SPL-2")
def test_sparse_and_negative_ids_name_submodules() -> None:
    traced = torch.fx.symbolic_trace(S5Model())
    ids = {"add": -1, "mul": 40}
    split = split_module(traced, None, lambda n: ids[n.name], partition_affix="pp")
    expected = torch_split(traced, traced, lambda n: ids[n.name], partition_affix="pp")
    assert module_form(split) == module_form(expected)
    assert split.meta["partition_names"] == {"submod_pp_-1", "submod_pp_40"}
    x, y = torch.rand(2), torch.rand(2)
    torch.testing.assert_close(split(x, y), (x + y) * x)
