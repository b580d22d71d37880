"""TRK-13: offline keying's fast path (`reference.fast.keys.track_graph_fast`) gives the
tracker of the plain path (`track_graph(graph)`, one `keys.node_key` per node), key for
key, bucket for bucket, on the corpus, random models and odd tensors; and the plain path's tensor
metadata is torch's own (`extract_tensor_metadata`), read directly.
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
from reference.fast.keys import KeyCache, track_graph_fast
from reference.fx_helpers import example_value
from reference.track.keys import TensorMeta, tensor_meta
from reference.track.offline import track_graph
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


def assert_same_keys(graph: torch.fx.Graph) -> int:
    """The fast tracker equals the plain one: every node's key, its bucket (members in order),
    the untracked nodes with their reasons, the mutated positions; every tensor argument's
    metadata is torch's. Returns how many nodes were keyed."""
    fast, plain = track_graph_fast(graph), track_graph(graph)
    assert fast.node_to_key == plain.node_to_key, "TRK-13: keys differ"
    assert list(fast.hash_to_duplicates.items()) == list(plain.hash_to_duplicates.items())
    for node, bucket in plain.node_to_duplicates.items():
        assert fast.node_to_duplicates[node] == bucket, f"TRK-13: {node.name}'s bucket"
    assert fast.untracked == plain.untracked, "TRK-13: untracked nodes differ"
    fast_writes = {n: tuple(p) for n, p in fast.node_to_mutated_arg_positions.items()}
    plain_writes = {n: tuple(p) for n, p in plain.node_to_mutated_arg_positions.items()}
    assert fast_writes == plain_writes, "TRK-13: mutated positions differ"
    for node in graph.nodes:
        value = example_value(node)
        if isinstance(value, torch.Tensor) and node in plain.node_to_key:
            assert tensor_meta(value) == extracted(value), f"TRK-13: {node.name}'s metadata"
    return len(plain.node_to_key)


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
        keys = track_graph_fast(graph).node_to_key
        expected = outside == "enabled"
        assert liar.requires_grad is expected
    metas = [k.args[0] for k in keys.values() if k.op == "call_function"]
    assert [m.requires_grad for m in metas if isinstance(m, TensorMeta)] == [expected, False]
    assert torch._C._is_torch_function_enabled(), "TRK-13: the state is restored"
