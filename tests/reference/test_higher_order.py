"""Higher-order ops and torch's runtime in outlining (spec chapter 03, RPL-20 to RPL-23): bodies
travel as attributes, operands and outputs are values torch's runtime handles, subgraph nodes
carry `val`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

from reference.dynamo.capture import capture
from reference.names import INVOKE
from reference.pipeline import deduplicate, outline_groups
from reference.replace.bodies import same_body
from reference.replace.legality import Refusal
from reference.replace.runtime import runtime_takes
from tests.support.corpus import CORPUS_DIR, load_model_file
from tests.support.models import njt_blocks, njt_inputs

Node = torch.fx.Node


@pytest.mark.spec("RPL-20")
def test_rpl20_custom_autograd_function_outlines_with_its_body() -> None:
    f = load_model_file(CORPUS_DIR / "own_autograd_function.py")
    c = capture(f.model, f.example_inputs)
    before = c.gm(*c.example_inputs)
    assert same_body(c.gm.get_submodule("fwd_body_1"), c.gm.get_submodule("fwd_body_2"))
    result = deduplicate(c.gm, c.tracker)
    assert [r.region for r in result.replaced] == [0, 1] and not result.refused
    sub = result.subgraphs["subgraph_0"]
    fetched = [n.target for n in sub.graph.nodes if n.op == "get_attr"]
    assert fetched == ["fwd_body_1", "bwd_body_1"]  # the representative's bodies, inside
    calls = [n for n in c.gm.graph.nodes if n.target is INVOKE]
    assert all(isinstance(a, Node) and a.op != "get_attr" for c_ in calls for a in c_.args[2:])
    torch.testing.assert_close(c.gm(*c.example_inputs), before)


@pytest.mark.spec("RPL-20")
def test_rpl20_a_different_body_is_refused() -> None:
    """Region 1's forward body computes `tanh` where the representative's computes `sigmoid`:
    the subgraph would run the representative's, so region 1 stays as it is."""
    f = load_model_file(CORPUS_DIR / "own_autograd_function.py")
    c = capture(f.model, f.example_inputs)
    body = c.gm.get_submodule("fwd_body_2")
    assert isinstance(body, torch.fx.GraphModule)
    sigmoid = next(n for n in body.graph.nodes if n.target is torch.sigmoid)
    sigmoid.target = torch.tanh
    body.recompile()
    assert not same_body(c.gm.get_submodule("fwd_body_1"), body)
    result = deduplicate(c.gm, c.tracker)
    assert [(r.region, r.reason) for r in result.refused] == [(1, Refusal.OTHER_BODY)]
    assert "fwd_body_2 differs from fwd_body_1" in result.refused[0].detail


class _PlainValues(torch.fx.Interpreter):
    """Records a node's int value where FakeTensorProp left none (torch 2.11 and 2.12 record
    tensors only)."""

    def run_node(self, n: Node) -> Any:
        value = super().run_node(n)
        if isinstance(value, int) and n.meta.get("val") is None:
            n.meta["val"] = value
        return value


def _traced(fn: Callable[..., Any], *inputs: object) -> torch.fx.GraphModule:
    gm = torch.fx.symbolic_trace(fn)
    FakeTensorProp(gm).propagate(*inputs)
    _PlainValues(gm).run(*inputs)
    for node in gm.graph.nodes:
        node.meta["example_value"] = node.meta.get("val")
    return gm


def _two_regions(gm: torch.fx.GraphModule, *names: str) -> list[list[Node]]:
    by_name = {n.name: n for n in gm.graph.nodes}
    half = len(names) // 2
    return [[by_name[n] for n in names[:half]], [by_name[n] for n in names[half:]]]


def scaled(x: torch.Tensor, y: torch.Tensor, p: float) -> torch.Tensor:
    return torch.sin(x * p) + torch.sin(y * p)


@pytest.mark.spec("RPL-21")
def test_rpl21_a_float_operand_is_refused() -> None:
    gm = _traced(scaled, torch.randn(3), torch.randn(3), 0.5)
    p = next(n for n in gm.graph.nodes if n.name == "p")
    p.meta["example_value"] = 0.5  # a lifted float, as Dynamo lifts an unspecialized scalar
    result = outline_groups(gm, [_two_regions(gm, "mul", "sin", "mul_1", "sin_1")], {})
    assert {r.reason for r in result.refused} == {Refusal.OPERAND}
    assert "p is a float" in result.refused[0].detail


@pytest.mark.spec("RPL-22")
def test_rpl22_subgraph_nodes_carry_val() -> None:
    f = load_model_file(CORPUS_DIR / "d01_single_subgraph.py")
    c = capture(f.model, f.example_inputs)
    result = deduplicate(c.gm, c.tracker)
    (sub,) = result.subgraphs.values()
    valued = [n for n in sub.graph.nodes if n.op != "output"]
    assert valued and all(n.meta.get("val") is n.meta["example_value"] for n in valued)


@pytest.mark.spec("RPL-21")
def test_rpl21_a_nested_jagged_operand_is_refused() -> None:
    """torch's runtime has no rule for the NestedTensor subclass: a call taking one raises."""
    c = capture(njt_blocks, njt_inputs())
    result = deduplicate(c.gm, c.tracker)
    assert not result.replaced
    assert [(r.reason, r.detail) for r in result.refused] == [
        (Refusal.OPERAND, "nt is a NestedTensor"),
        (Refusal.OPERAND, "add is a NestedTensor"),
    ]


@pytest.mark.spec("RPL-21")
def test_rpl21_plain_fake_and_parameter_tensors_are_taken() -> None:
    with FakeTensorMode():
        fake = torch.ones(2)
    assert all(map(runtime_takes, (torch.ones(2), torch.nn.Parameter(torch.ones(2)), fake)))
    nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged)
    assert not runtime_takes(nested)


# A type registered as opaque for the test below (torch's registry is process-wide); built with
# `type` because torch 2.14+ re-exports `OpaqueBase` implicitly, which mypy --strict refuses
_Opaque = type("_Opaque", (importlib.import_module("torch._opaque_base").OpaqueBase,), {})


class _NotRegistered:
    pass


@pytest.mark.spec("RPL-21")
def test_rpl21_script_and_opaque_objects_are_taken_as_torch_s_runtime_takes_them() -> None:
    from torch._library.fake_class_registry import FakeScriptObject
    from torch._library.opaque_object import is_opaque_type, register_opaque_type

    if not is_opaque_type(_Opaque):
        register_opaque_type(_Opaque, typ="reference")
    script = FakeScriptObject(object(), "__torch__.torch.classes.test.Foo", None)
    assert runtime_takes(script)
    assert runtime_takes(_Opaque())
    assert not runtime_takes(_NotRegistered())
    assert not runtime_takes(1.5)
    # torch 2.13's own check agrees: it raises for what runtime_takes refuses
    from torch._higher_order_ops.invoke_subgraph import invoke_subgraph

    with pytest.raises(AssertionError, match="operands must be"):
        invoke_subgraph(torch.fx.GraphModule(torch.nn.Module(), torch.fx.Graph()), "s", 1.5)


def sizes(x: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    for _ in range(2):
        s = x.size(0)
        x = torch.cos(x * s)
        z = z + s
    return x, z


@pytest.mark.spec("RPL-23")
def test_rpl23_an_int_output_is_refused() -> None:
    """`s = x.size(0)` is used outside the region too: the subgraph would return a plain int,
    which torch's runtime cannot; the group is refused whole."""
    gm = _traced(sizes, torch.randn(3), torch.randn(3))
    group = _two_regions(gm, "size", "mul", "cos", "size_1", "mul_1", "cos_1")
    result = outline_groups(gm, [group], {})
    assert [(r.region, r.reason) for r in result.refused] == [(None, Refusal.OUTPUT)]
    assert result.refused[0].detail == "size is a int" and not result.subgraphs
