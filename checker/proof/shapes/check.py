"""Shapes at every call: each operand of an `invoke_subgraph` (or of a `call_module` of a graph
module) has the dtype, device, symbolic sizes and strides its callee was traced with (spec
chapter 06, CHK-5).

The callee's signature is its placeholders' `example_value` (or `val`) metadata, which the
reference sets (RPL-22). torch's deduplication and `split_module` leave subgraph placeholders
without it; the signature is then the operands of the callee's first call in graph order, so
every call must agree with the first.
Sizes and strides are proved equal with z3 (`prove_sizes_equal`) under the facts of the
ShapeEnv found in any fake value of the graphs; without one the graph is static and the sizes
are plain ints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import torch
import torch.fx
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.utils._pytree import tree_leaves

from checker.proof.graphs import called_module, graph_modules, value_of
from checker.proof.shapes.prove import NO_FACTS, ShapeFacts, prove_sizes_equal
from checker.proof.verdict import HOLDS, Holds, Unknown, Verdict, Violated
from reference.fx_helpers import example_value

Node = torch.fx.Node


def find_shape_env(modules: Sequence[torch.fx.GraphModule]) -> ShapeEnv | None:
    """The ShapeEnv of the first fake tensor or SymInt in the metadata, in graph order."""
    for gm in modules:
        for _, module in graph_modules(gm):
            for node in module.graph.nodes:
                for leaf in tree_leaves(example_value(node)):
                    env = _shape_env_of(leaf)
                    if env is not None:
                        return env
    return None


def _shape_env_of(leaf: Any) -> ShapeEnv | None:
    if isinstance(leaf, torch.SymInt | torch.SymFloat | torch.SymBool):
        env: ShapeEnv | None = leaf.node.shape_env  # typed from torch 2.14, Any before
        return env
    fake_mode = getattr(leaf, "fake_mode", None) if isinstance(leaf, torch.Tensor) else None
    return cast(ShapeEnv | None, getattr(fake_mode, "shape_env", None))


def facts_of(modules: Sequence[torch.fx.GraphModule]) -> ShapeFacts:
    """The ShapeEnv facts of the graphs, or no facts for static graphs."""
    env = find_shape_env(modules)
    return NO_FACTS if env is None else ShapeFacts.from_shape_env(env)


def compare_values(a: Any, b: Any, facts: ShapeFacts, timeout_ms: int) -> Verdict:
    """Holds when two example values have equal dtype, device, sizes and strides (tuples
    element-wise); values that are not tensors hold (they are data, not a traced shape)."""
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        if len(a) != len(b):
            return Violated(f"{len(a)} values vs {len(b)}")
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            found = compare_values(x, y, facts, timeout_ms)
            if not isinstance(found, Holds):
                return _prefixed(found, f"element {k}: ")
        return HOLDS
    if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
        return HOLDS
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return Unknown("a tensor is compared with a value without tensor metadata")
    if a.dtype != b.dtype or a.device != b.device:
        return Violated(f"{a.dtype} on {a.device} vs {b.dtype} on {b.device}")
    sizes = _prove(a.shape, b.shape, facts, timeout_ms)
    if not isinstance(sizes, Holds):
        return _prefixed(sizes, "sizes: ")
    return _prefixed(_prove(a.stride(), b.stride(), facts, timeout_ms), "strides: ")


def _prove(a: Sequence[Any], b: Sequence[Any], facts: ShapeFacts, timeout_ms: int) -> Verdict:
    if all(type(x) is int for x in (*a, *b)):  # static: no solver, no sympy
        return HOLDS if tuple(a) == tuple(b) else Violated(f"{list(a)} vs {list(b)}")
    return prove_sizes_equal(a, b, facts, timeout_ms)


def _prefixed(verdict: Verdict, prefix: str) -> Verdict:
    match verdict:
        case Violated(witness, model):
            return Violated(prefix + witness, model)
        case Unknown(reason):
            return Unknown(prefix + reason)
        case Holds():
            return verdict


def check_call_shapes(gm: torch.fx.GraphModule, facts: ShapeFacts, timeout_ms: int) -> Verdict:
    """Every call's operands match its callee's signature (CHK-5)."""
    signatures: list[tuple[torch.fx.GraphModule, tuple[Any, ...]]] = []
    unknown: list[str] = []
    for path, module in graph_modules(gm):
        for node in module.graph.nodes:
            call = called_module(module, node)
            if call is None:
                continue
            callee, operands = call
            signature = _signature(callee, operands, signatures)
            for k, (operand, expected) in enumerate(zip(operands, signature, strict=False)):
                found = value_of(module, operand)
                verdict = compare_values(found, expected, facts, timeout_ms)
                where = f"{path}{node.name} operand {k} ({operand.name})"
                match verdict:
                    case Violated(witness, model):
                        return Violated(f"CHK-5: {where}: {witness}", model)
                    case Unknown(reason):
                        unknown.append(f"{where}: {reason}")
                    case Holds():
                        pass
    return Unknown("CHK-5: " + "; ".join(unknown[:3])) if unknown else HOLDS


def _signature(
    callee: torch.fx.GraphModule,
    operands: Sequence[Node],
    signatures: list[tuple[torch.fx.GraphModule, tuple[Any, ...]]],
) -> tuple[Any, ...]:
    """The placeholders' metadata, or else the first call's operands (remembered)."""
    placeholders = [n for n in callee.graph.nodes if n.op == "placeholder"]
    if all(example_value(p) is not None for p in placeholders):
        return tuple(example_value(p) for p in placeholders)
    for known, signature in signatures:
        if known is callee:
            return signature
    signature = tuple(example_value(o) for o in operands)
    signatures.append((callee, signature))
    return signature
