"""Shared models, graph capture, split policies and graph comparison for the split tests (spec
chapter 05, SPL).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch import nn

from reference.names import qualified_name

Policy = Callable[[torch.fx.GraphModule], dict[str, int]]


@dataclass(frozen=True, slots=True)
class Captured:
    """A Dynamo graph and the example inputs its backend received."""

    name: str
    gm: torch.fx.GraphModule
    inputs: tuple[Any, ...]
    has_state: bool


def capture(name: str, fn: Callable[..., Any], *args: Any, dynamic: bool = False) -> Captured:
    """Capture the single graph of `fn(*args)` and the arguments it ran with."""
    graphs: list[tuple[torch.fx.GraphModule, tuple[Any, ...]]] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        def run(*real: Any) -> Any:  # the runtime arguments, sizes as plain ints
            graphs.append((gm, real))
            return gm.forward(*real)

        return run

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True, dynamic=dynamic)(*args)
    assert len(graphs) == 1
    gm, inputs = graphs[0]
    state = any(n.target in _STATE for n in gm.graph.nodes)
    return Captured(name, gm, inputs, state)


_STATE = (
    torch._C._set_grad_enabled,
    torch.amp.autocast_mode._enter_autocast,
    torch.amp.autocast_mode._exit_autocast,
)


# ---------------------------------------------------------------- models


class MLP(nn.Module):
    def __init__(self, width: int = 8, depth: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class Attention(nn.Module):
    def __init__(self, width: int = 8, depth: int = 2) -> None:
        super().__init__()
        self.qkv = nn.ModuleList(nn.Linear(width, 3 * width) for _ in range(depth))
        self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for qkv, norm in zip(self.qkv, self.norms, strict=True):
            q, k, v = qkv(norm(x)).chunk(3, dim=-1)  # a tuple-valued node
            w = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1)
            x = x + w @ v
        return x


class TupleBlocks(nn.Module):
    """Blocks whose values are tuples (topk, split) used across later nodes."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.topk(x, 2, dim=-1)
        a, b = torch.split(x, [3, 5], dim=-1)
        y = a.sum(-1, keepdim=True) * values + b.mean(-1, keepdim=True)
        return y.cos() + indices.float(), torch.sin(b).sum(-1)


class StateRegions(nn.Module):
    """Grad-mode and autocast regions around ordinary compute."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = torch.sin(self.lin(x))
        with torch.no_grad():
            e = torch.cos(a) * 2
            f = e + 1
        with torch.autocast("cpu", dtype=torch.bfloat16):
            g = self.lin(a)
            h = g @ a.t()
        return f + a, a, h.float().sum(-1), e


class Sizes(nn.Module):
    """Uses sizes as values: under dynamic shapes, sym_size nodes and symbolic inputs."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        z = torch.relu(x).reshape(n, -1)
        w = (z * 2).sum(-1, keepdim=True)
        return (w + y[:n]).expand(n, y.shape[-1]) + y.shape[0]


class Branches(nn.Module):
    """Two independent branches joined at the end: room for non-monotonic splits."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = torch.relu(x.sin() * 2)
        d = (y.cos() + 1).exp()
        return b + d.sum(), d


def b6_model(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """B6: `a=sin(x); with no_grad: e=cos(a); return e+a, a`."""
    a = torch.sin(x)
    with torch.no_grad():
        e = torch.cos(a)
    return e + a, a


def captured_cases() -> list[Captured]:
    """The differential corpus: MLP and attention stacks, tuple blocks, state regions, sizes."""
    torch.manual_seed(0)
    x8 = torch.randn(4, 8, requires_grad=True)
    return [
        capture("mlp", MLP(), x8),
        capture("mlp_dyn", MLP(), torch.randn(5, 8), dynamic=True),
        capture("attention", Attention(), torch.randn(2, 3, 8)),
        capture("attention_dyn", Attention(), torch.randn(2, 3, 8), dynamic=True),
        capture("tuples", TupleBlocks(), torch.randn(3, 8)),
        capture("state", StateRegions(), x8),
        capture("state_dyn", StateRegions(), torch.randn(5, 8, requires_grad=True), dynamic=True),
        capture("sizes_dyn", Sizes(), torch.randn(4, 2, 3), torch.randn(6, 5), dynamic=True),
        capture("branches", Branches(), torch.randn(3), torch.randn(3)),
    ]


# ---------------------------------------------------------------- policies


def call_names(gm: torch.fx.GraphModule) -> list[str]:
    """Names of the nodes split_module partitions, in graph order."""
    return [n.name for n in gm.graph.nodes if n.op not in ("placeholder", "get_attr", "output")]


def contiguous(parts: int) -> Policy:
    def policy(gm: torch.fx.GraphModule) -> dict[str, int]:
        names = call_names(gm)
        return {n: i * parts // max(len(names), 1) for i, n in enumerate(names)}

    return policy


def every(k: int) -> Policy:
    return lambda gm: {n: i // k for i, n in enumerate(call_names(gm))}


def round_robin(parts: int) -> Policy:
    return lambda gm: {n: i % parts for i, n in enumerate(call_names(gm))}


def seeded(seed: int, parts: int, monotonic: bool = False) -> Policy:
    def policy(gm: torch.fx.GraphModule) -> dict[str, int]:
        rng = random.Random(seed)
        names = call_names(gm)
        ids = [rng.randrange(parts) * 3 for _ in names]  # sparse ids
        return dict(zip(names, sorted(ids) if monotonic else ids, strict=True))

    return policy


def by_first_input(gm: torch.fx.GraphModule) -> dict[str, int]:
    """1 for nodes that depend on the first placeholder, 0 for the others (B7 on Branches)."""
    first = next(n for n in gm.graph.nodes if n.op == "placeholder")
    tainted = {first}
    for node in gm.graph.nodes:
        if any(a in tainted for a in node.all_input_nodes):
            tainted.add(node)
    return {n.name: int(n in tainted) for n in gm.graph.nodes if n.name in call_names(gm)}


def callback(mapping: dict[str, int]) -> Callable[[torch.fx.Node], int]:
    """A deterministic callback: torch may call it several times per node."""
    return lambda node: mapping[node.name]


# ---------------------------------------------------------------- comparison


def _form(arg: object) -> object:
    if isinstance(arg, torch.fx.Node):
        return f"%{arg.name}"
    if isinstance(arg, (tuple, list)):
        return tuple(_form(a) for a in arg)
    if isinstance(arg, dict):
        return tuple((k, _form(v)) for k, v in arg.items())
    if callable(arg) and not isinstance(arg, torch.dtype):
        return qualified_name(arg)
    return repr(arg)


def graph_form(graph: torch.fx.Graph) -> tuple[tuple[object, ...], ...]:
    """Every node as (op, name, target, args, kwargs), targets by qualified name."""
    return tuple(
        (n.op, n.name, qualified_name(n.target), _form(n.args), _form(n.kwargs))
        for n in graph.nodes
    )


def module_form(gm: torch.nn.Module) -> tuple[object, ...]:
    """A split module's structure: base graph and each child's graph, by name."""
    assert isinstance(gm, torch.fx.GraphModule)
    children = tuple(
        (name, graph_form(c.graph) if isinstance(c, torch.fx.GraphModule) else type(c).__name__)
        for name, c in gm.named_children()
    )
    return (graph_form(gm.graph), children)


def flat_outputs(value: object) -> list[torch.Tensor]:
    """The tensors of a (possibly nested) output, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat_outputs(v)]
    return []


def assert_same_results(expected: object, actual: object) -> None:
    """Values close and `requires_grad` equal, output by output."""
    exp, act = flat_outputs(expected), flat_outputs(actual)
    assert len(exp) == len(act)
    for e, a in zip(exp, act, strict=True):
        torch.testing.assert_close(a, e)
        assert a.requires_grad == e.requires_grad


# ---------------------------------------------------------------- graph inspection


def placeholders(gm: torch.nn.Module) -> list[str]:
    assert isinstance(gm, torch.fx.GraphModule)
    return [n.name for n in gm.graph.nodes if n.op == "placeholder"]


def output_names(gm: torch.nn.Module) -> object:
    assert isinstance(gm, torch.fx.GraphModule)
    (out,) = (n for n in gm.graph.nodes if n.op == "output")
    return torch.fx.map_arg(out.args[0], lambda n: n.name)


def submod(gm: torch.fx.GraphModule, name: str) -> torch.fx.GraphModule:
    child = getattr(gm, name)
    assert isinstance(child, torch.fx.GraphModule)
    return child


def calls(gm: torch.fx.GraphModule) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_module"]
