"""TRK-13: offline keying's fast path (tensor metadata read directly, each value described once)
gives the keys of the plain path, value for value, on the corpus, random models and odd tensors.

The plain path here is the one fxoracle had before: every argument described afresh from
torch's own `extract_tensor_metadata`.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensorMode, extract_tensor_metadata

from checker.oracle.campaign.randmodels import random_model
from reference.dynamo.capture import capture
from reference.effects.node_effects import writes
from reference.fx_helpers import example_value
from reference.key.fast_keys import KeyCache
from reference.key.keys import (
    ArgKey,
    Missing,
    TensorMeta,
    Unkeyable,
    node_key,
    tensor_meta,
    value_key,
)
from reference.key.tracker import track_graph
from tests.support.corpus import corpus_files, load_model_file

RANDOM_MODELS = 24
FLAGS = ("is_quantized", "is_conj", "is_neg", "is_inference", "is_sparse")


def extracted(t: torch.Tensor) -> TensorMeta:
    """The metadata as torch's `extract_tensor_metadata` gives it (the plain path)."""
    meta = extract_tensor_metadata(t)
    return TensorMeta(
        dtype=str(meta.dtype),
        shape=tuple(str(s) for s in meta.shape),
        stride=tuple(str(s) for s in meta.stride),
        device=str(meta.device),
        layout=str(meta.layout),
        memory_format=str(meta.memory_format),
        requires_grad=bool(meta.requires_grad),
        flags=tuple(f for f in FLAGS if getattr(meta, f)),
    )


def plain_arg_key(arg: Any) -> ArgKey:
    if isinstance(arg, torch.fx.Node):
        value = example_value(arg)
        return Missing() if value is None else value_key(value, None, extracted)
    return value_key(arg, plain_arg_key, extracted)


def assert_same_keys(graph: torch.fx.Graph) -> int:
    """Every node's fast key equals its plain key (untracked on both paths alike), and its
    mutated positions are the plain ones; returns how many nodes were compared."""
    fast = track_graph(graph)
    compared = 0
    for node in graph.nodes:
        if node.op == "output":
            continue
        key = fast.node_to_key.get(node)
        if key is None:
            assert node in fast.untracked, f"TRK-13: {node.name} neither keyed nor untracked"
            with pytest.raises(Unkeyable):
                node_key(node, fast._read_state(), None, plain_arg_key)
            continue
        plain = node_key(node, key.global_state, key.call_site, plain_arg_key)
        assert key == plain, f"TRK-13: {node.name}: {key} != {plain}"
        positions = tuple(fast.node_to_mutated_arg_positions.get(node, ()))
        assert positions == writes(node), f"TRK-13: {node.name} mutations"
        compared += 1
    return compared


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem)
def test_trk13_fast_keys_equal_plain_keys_on_the_corpus(path: Any) -> None:
    f = load_model_file(path)
    c = capture(f.model, f.example_inputs, f.dynamic)
    assert assert_same_keys(c.gm.graph) > 0


def test_trk13_fast_keys_equal_plain_keys_on_random_models() -> None:
    compared = 0
    for index in range(RANDOM_MODELS):
        m = random_model(7, index)
        compared += assert_same_keys(capture(m.model, m.example_inputs, m.dynamic).gm.graph)
    assert compared > 10 * RANDOM_MODELS


def _odd_tensors() -> list[torch.Tensor]:
    base = torch.randn(2, 3, 4, 5)
    with torch.inference_mode():
        inference = torch.ones(3)
    return [
        base,
        base.to(memory_format=torch.channels_last),
        torch.randn(2, 3, 4, 5, 6).to(memory_format=torch.channels_last_3d),
        base.transpose(1, 3),  # dense in no format
        base[:, :, ::2],
        torch.randn(1, 3, 1, 1),  # ambiguous strides: both formats fit
        torch.randn(4).expand(3, 4),  # stride 0
        torch.randn(3, 4, requires_grad=True),
        torch.randn(3, dtype=torch.complex64).conj(),
        torch.randn(3, dtype=torch.complex64).conj().imag,
        torch.randn(3)._neg_view(),
        inference,
        torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.quint8),
        torch.randn(3, 3).to_sparse(),
        torch.randn(3, 3).to_sparse_csr(),
        torch.zeros(0, 4),
        torch.tensor(1.5),
    ]


@pytest.mark.filterwarnings(
    "ignore::UserWarning"
)  # quantized and CSR tensors warn as they are made
def test_trk13_direct_metadata_equals_torch_s_on_odd_tensors() -> None:
    tensors = _odd_tensors()
    with FakeTensorMode() as mode:
        fakes = [mode.from_tensor(t) for t in tensors
                 if t.layout == torch.strided and not t.is_quantized]  # fmt: skip
    cache = KeyCache()
    for t in [*tensors, *fakes]:
        expected = extracted(t)
        assert tensor_meta(t) == expected, f"TRK-13: {expected}"
        assert cache.tensor_meta(t) == expected, f"TRK-13 (cached): {expected}"


def test_trk13_symbolic_sizes_as_canonical_strings() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x.sin() + 1).transpose(0, 1).contiguous()

    c = capture(fn, (torch.randn(4, 6),), dynamic=True)
    assert assert_same_keys(c.gm.graph) > 0
    shapes = {a.shape for k in track_graph(c.gm.graph).node_to_key.values() for a in k.args
              if isinstance(a, TensorMeta)}  # fmt: skip
    assert any(not s.isdigit() for shape in shapes for s in shape), shapes


class _GradReporting(torch.Tensor):
    """A subclass whose `__torch_function__` is real: it says every instance requires grad."""

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if getattr(func, "__self__", None) is torch.Tensor.requires_grad:
            return True
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


def _graph_of_values(*values: torch.Tensor) -> torch.fx.Graph:
    """x_i placeholders holding `values`, each used by a `torch.neg` node."""
    graph = torch.fx.Graph()
    for i, value in enumerate(values):
        x = graph.placeholder(f"x{i}")
        x.meta["example_value"] = value
        graph.call_function(torch.neg, (x,))
    return graph


@pytest.mark.parametrize("outside", ["enabled", "subclasses off", "all off"])
def test_trk13_subclass_torch_function_read_as_outside(outside: str) -> None:
    """Keys are built with subclass `__torch_function__` off (FakeTensor's is a no-op that
    every read would look up); a tensor whose subclass has a real one is still read through
    it, as the plain path reads it under whatever state the caller has."""
    liar = torch.randn(3).as_subclass(_GradReporting)
    graph = _graph_of_values(liar, torch.randn(3))
    contexts: dict[str, contextlib.AbstractContextManager[object]] = {
        "enabled": contextlib.nullcontext(),
        "subclasses off": torch._C.DisableTorchFunctionSubclass(),
        "all off": torch._C.DisableTorchFunction(),
    }
    with contexts[outside]:
        assert assert_same_keys(graph) == 4
        keys = track_graph(graph).node_to_key
        expected = outside == "enabled"
        assert liar.requires_grad is expected
    metas = [k.args[0] for k in keys.values() if k.op == "call_function"]
    assert [m.requires_grad for m in metas if isinstance(m, TensorMeta)] == [expected, False]
    assert torch._C._is_torch_function_enabled(), "TRK-13: the state is restored"
