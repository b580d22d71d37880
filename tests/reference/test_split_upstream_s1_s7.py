"""torch's own split_module scenarios S1-S7 (test_fx_experimental.py), run on the reference and
compared with torch (spec chapter 05, SPL).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, cast

import pytest
import torch
import torch.fx
from torch import nn
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.split_module import split_module as torch_split

from reference.split import split_module
from reference.torch_version import TORCH
from tests.support.split_cases import calls, module_form, output_names, placeholders, submod


class S1Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.param = nn.Parameter(torch.rand(3, 4))
        self.linear = nn.Linear(4, 5)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = self.linear(x + self.param).clamp(min=0.0, max=1.0)
        w = self.linear(y).clamp(min=0.0, max=1.0)
        return cast(torch.Tensor, z + w)


def counter_callback(parts: int) -> Callable[[torch.fx.Node], int]:
    """The stateful `counter % parts` callback of S1: it relies on one call per node."""
    count = [0]

    def callback(_: torch.fx.Node) -> int:
        count[0] += 1
        return (count[0] - 1) % parts

    return callback


@pytest.mark.spec("SPL-1", "SPL-3", "SPL-13")
def test_s1_subgraph_creation_keeps_meta_and_results() -> None:
    traced = torch.fx.symbolic_trace(S1Model())
    for node in traced.graph.nodes:
        node.meta["tag"] = f"meta-{node.name}"
    split = split_module(traced, None, counter_callback(3))
    reference = torch_split(traced, traced, counter_callback(3))
    assert module_form(split) == module_form(reference)
    assert placeholders(submod(split, "submod_0")) == ["x", "param", "y"]
    assert output_names(submod(split, "submod_0")) == ("add", "linear")
    assert placeholders(submod(split, "submod_1")) == ["add", "linear_1"]
    assert placeholders(submod(split, "submod_2")) == ["linear", "clamp_1"]
    for _, child in split.named_children():
        for node in child.graph.nodes if isinstance(child, torch.fx.GraphModule) else []:
            if node.op != "output":
                assert node.meta["tag"].startswith("meta-")
    x, y = torch.rand(3, 4), torch.rand(3, 4)
    torch.testing.assert_close(split(x, y), traced(x, y))


class S2Model(nn.Module):
    def forward(self, x: Any, a0: Any, a1: Any, b0: Any, b1: Any, c0: Any, c1: Any) -> Any:
        x = x + (a0**2) + (a1 / 2)
        x = x + (b0**2) + (b1 / 2)
        return x + (c0**2) + (c1 / 2)


@pytest.mark.spec("SPL-4", "SPL-1")
def test_s2_input_names_are_positional_and_callback_runs_once_per_node() -> None:
    traced = torch.fx.symbolic_trace(S2Model())
    seen: list[str] = []

    def by_four(node: torch.fx.Node) -> int:
        seen.append(node.name)
        return (len(seen) - 1) // 4

    split = split_module(traced, None, by_four, keep_original_input_name=False)
    assert len(seen) == 12
    first = submod(split, "submod_0")
    base_calls = [n for n in split.graph.nodes if n.op == "call_module"]
    assert [a.name for a in base_calls[0].args] == ["a0", "x", "a1"]  # order of first use
    args = (torch.tensor(2.0), torch.tensor(3.0), torch.tensor(4.0))
    for name in ("submod_0", "submod_1", "submod_2"):
        assert placeholders(submod(split, name)) == ["arg_0", "arg_1", "arg_2"]
        torch.testing.assert_close(submod(split, name)(*args), first(*args))
    inputs = [torch.rand(2) for _ in range(7)]
    torch.testing.assert_close(split(*inputs), traced(*inputs))


class S3Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x * 2
        _ = x + 2  # dead, but still partitioned
        return out


@pytest.mark.spec("SPL-5", "SPL-7")
def test_s3_dead_code_partition_returns_empty_tuple_and_runs_first() -> None:
    traced = torch.fx.symbolic_trace(S3Model(), concrete_args=None)
    ids = {"mul": 1, "add": 2}
    split = split_module(traced, None, lambda n: ids[n.name])
    assert module_form(split) == module_form(torch_split(traced, traced, lambda n: ids[n.name]))
    assert calls(split) == ["submod_2", "submod_1"]  # LIFO roots: the later root first
    assert output_names(submod(split, "submod_2")) == ()
    x = torch.rand(3)
    torch.testing.assert_close(split(x), x * 2)


@pytest.mark.spec("SPL-5")
def test_s4_inplace_only_partition_has_an_output_node() -> None:
    def f(x: torch.Tensor) -> None:
        x.add_(1)

    gm = make_fx(f)(torch.zeros(2))
    split = split_module(gm, None, lambda _: 1)
    assert module_form(split) == module_form(torch_split(gm, gm, lambda _: 1))
    assert output_names(submod(split, "submod_1")) == ()
    x = torch.zeros(2)
    assert split(x) is None
    torch.testing.assert_close(x, torch.ones(2))


class S5Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = x + y
        return a * x


@pytest.mark.spec("SPL-5")
@pytest.mark.parametrize("tuple_return", [False, True])
def test_s5_single_output_bare_unless_tuple_return(tuple_return: bool) -> None:
    traced = torch.fx.symbolic_trace(S5Model())
    ids = {"add": 0, "mul": 1}
    split = split_module(traced, None, lambda n: ids[n.name], tuple_return=tuple_return)
    if TORCH.split_tuple_return or not tuple_return:  # torch 2.11 has no tuple_return
        split_torch = partial(torch_split, tuple_return=True) if tuple_return else torch_split
        expected = split_torch(traced, traced, lambda n: ids[n.name])
        assert module_form(split) == module_form(expected)
    x, y = torch.rand(2), torch.rand(2)
    assert isinstance(submod(split, "submod_0")(x, y), tuple) == tuple_return
    assert isinstance(submod(split, "submod_1")(x, x), tuple) == tuple_return
    torch.testing.assert_close(split(x, y), (x + y) * x)


class S6Model(nn.Module):
    def forward(self, x: torch.Tensor, **kwargs: torch.Tensor) -> torch.Tensor:
        return x + kwargs["foo"]


@pytest.mark.spec("SPL-12")
def test_s6_kwargs_placeholder_keeps_its_target() -> None:
    traced = torch.fx.symbolic_trace(S6Model())
    split = split_module(traced, None, lambda _: 0)
    assert module_form(split) == module_form(torch_split(traced, traced, lambda _: 0))
    kwargs_node = [n for n in split.graph.nodes if n.op == "placeholder"][1]
    assert (kwargs_node.name, kwargs_node.target) == ("_kwargs", "**kwargs")
    x, foo = torch.rand(2), torch.rand(2)
    torch.testing.assert_close(split(x, foo=foo), x + foo)


class TinyResNet(nn.Module):
    """S7 stand-in for resnet18 (torchvision is not installed): conv-bn-relu with residuals."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
            for _ in range(2)
        )
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for block in self.blocks:
            x = torch.relu(block(x) + x)
        pooled = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return cast(torch.Tensor, self.fc(pooled))


@pytest.mark.spec("SPL-14", "SPL-13")
def test_s7_trivial_residual_cnn_single_partition() -> None:
    model = TinyResNet().eval()
    traced = torch.fx.symbolic_trace(model)
    qualnames: dict[str, str] = {}
    split = split_module(traced, None, lambda _: 0, qualnames)
    expected: dict[str, str] = {}
    assert module_form(split) == module_form(torch_split(traced, traced, lambda _: 0, expected))
    assert qualnames == expected
    assert qualnames["submod_0.blocks_0_0"] == "blocks.0.0"
    x = torch.rand(2, 3, 8, 8)
    torch.testing.assert_close(split(x), model(x))
