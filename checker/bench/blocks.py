"""Synthetic graphs of repeated blocks for `make bench` (spec chapter 02, EXP-11 and EXP-13).

`repeated_blocks(n, kind)` builds the fx graph Dynamo would give for a loop over `n` identical
residual blocks, without running Dynamo (capturing 33k nodes would take minutes): every node
gets `meta["example_value"]`, a FakeTensor computed by running the op on fake inputs, and a fake
instruction translator whose call site is the op's position within the block, so the same op in
every block has the same call site, as a loop gives (also written as the node's `stack_trace`,
for offline keying). `feed(tracker, bg)` then calls `tracker.track_node(tx, node)` for every
node in graph order, as Dynamo does while tracing.

Kinds: "transformer" (a pre-norm attention + MLP block, 26 ops and 8 weight placeholders) and
"mlp" (a residual MLP, 5 ops and 4 weight placeholders). By default all blocks are identical:
the input requires grad, as an embedding's output does in training, so block 0 is keyed like the
rest and each block becomes one region.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch
import torch.fx
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

from reference.errors import FxOracleError

Node = torch.fx.Node

BATCH, SEQ, DIM, HEADS = 2, 8, 32, 4
HEAD_DIM = DIM // HEADS
SOURCE = "<fxoracle-bench>/blocks.py"

# Weight placeholders of one block, in the order they are created: (name, shape).
TRANSFORMER_WEIGHTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("ln1_weight", (DIM,)),
    ("ln1_bias", (DIM,)),
    ("qkv_weight", (3 * DIM, DIM)),
    ("proj_weight", (DIM, DIM)),
    ("ln2_weight", (DIM,)),
    ("ln2_bias", (DIM,)),
    ("up_weight", (4 * DIM, DIM)),
    ("down_weight", (DIM, 4 * DIM)),
)
MLP_WEIGHTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("ln_weight", (DIM,)),
    ("ln_bias", (DIM,)),
    ("up_weight", (4 * DIM, DIM)),
    ("down_weight", (DIM, 4 * DIM)),
)
TRANSFORMER_OPS, MLP_OPS = 26, 5


@dataclass(frozen=True, slots=True)
class FakeCode:
    """The part of a code object the trackers read."""

    co_filename: str


@dataclass(frozen=True, slots=True)
class FakeTranslator:
    """The part of Dynamo's instruction translator the trackers read: the node's call site."""

    f_code: FakeCode
    lineno: int
    instruction_pointer: int


def site(position: int) -> FakeTranslator:
    """The call site of the op at `position` within a block (the same in every block)."""
    return FakeTranslator(FakeCode(SOURCE), 10 + position, 2 * position)


def stack_trace(position: int) -> str:
    """`site(position)` as a node's `stack_trace`, for offline keying (`track_graph`)."""
    return f'  File "{SOURCE}", line {site(position).lineno}, in block\n'


@dataclass(frozen=True, slots=True, eq=False)
class BlockGraph:
    """A graph of repeated blocks and the translator of every tracked node, in graph order."""

    kind: str
    n_blocks: int
    graph: torch.fx.Graph
    sites: tuple[tuple[Node, FakeTranslator], ...]

    @property
    def n_nodes(self) -> int:
        """All nodes, the output included."""
        return len(self.graph.nodes)


class Tracker(Protocol):
    """What `feed` needs: torch's `GraphRegionTracker` and `reference.track.tracker`'s both fit."""

    def track_node(self, tx: Any, node: Node) -> None: ...


def feed(tracker: Tracker, bg: BlockGraph) -> None:
    """Track every node of `bg` (all but the output) in graph order, as Dynamo would."""
    for node, tx in bg.sites:
        tracker.track_node(tx, node)


class _Builder:
    """Appends nodes with their fake example values and call sites; positions count per block."""

    def __init__(self) -> None:
        self.graph = torch.fx.Graph()
        self.mode = FakeTensorMode()
        self.sites: list[tuple[Node, FakeTranslator]] = []
        self.position = 0

    def placeholder(
        self, name: str, shape: tuple[int, ...], position: int, requires_grad: bool = True
    ) -> Node:
        node = self.graph.placeholder(name)
        with self.mode:
            node.meta["example_value"] = torch.empty(shape, requires_grad=requires_grad)
        self._stamp(node, position)
        return node

    def _stamp(self, node: Node, position: int) -> None:
        """The call site at `position`, for live (`sites`) and offline (`stack_trace`) keying."""
        node.meta["stack_trace"] = stack_trace(position)
        self.sites.append((node, site(position)))

    def fn(self, target: Callable[..., Any], *args: Any) -> Node:
        return self._add(self.graph.call_function(target, args), target)

    def method(self, name: str, *args: Any) -> Node:
        return self._add(self.graph.call_method(name, args), None)

    def _add(self, node: Node, target: Callable[..., Any] | None) -> Node:
        values = torch.fx.map_arg(node.args, lambda n: n.meta["example_value"])
        with self.mode:
            if target is None:
                value = getattr(values[0], str(node.target))(*values[1:])
            else:
                value = target(*values)
        node.meta["example_value"] = value
        self._stamp(node, self.position)
        self.position += 1
        return node


def _transformer_block(b: _Builder, x: Node, w: Mapping[str, Node]) -> Node:
    """Pre-norm attention and MLP, each with a residual add (26 ops)."""
    h = b.fn(F.layer_norm, x, (DIM,), w["ln1_weight"], w["ln1_bias"])
    qkv = b.method("chunk", b.fn(F.linear, h, w["qkv_weight"]), 3, -1)
    q, k, v = (b.fn(operator.getitem, qkv, i) for i in range(3))
    q, k, v = (
        b.method("transpose", b.method("view", t, BATCH, SEQ, HEADS, HEAD_DIM), 1, 2)
        for t in (q, k, v)
    )
    att = b.fn(operator.matmul, q, b.method("transpose", k, -2, -1))
    att = b.method("softmax", b.fn(operator.mul, att, HEAD_DIM**-0.5), -1)
    y = b.method("transpose", b.fn(operator.matmul, att, v), 1, 2)
    y = b.fn(F.linear, b.method("reshape", y, BATCH, SEQ, DIM), w["proj_weight"])
    x = b.fn(operator.add, x, y)
    h = b.fn(F.layer_norm, x, (DIM,), w["ln2_weight"], w["ln2_bias"])
    h = b.fn(F.gelu, b.fn(F.linear, h, w["up_weight"]))
    return b.fn(operator.add, x, b.fn(F.linear, h, w["down_weight"]))


def _mlp_block(b: _Builder, x: Node, w: Mapping[str, Node]) -> Node:
    """A residual MLP: x + down(gelu(up(layer_norm(x)))) (5 ops)."""
    h = b.fn(F.layer_norm, x, (DIM,), w["ln_weight"], w["ln_bias"])
    h = b.fn(F.gelu, b.fn(F.linear, h, w["up_weight"]))
    return b.fn(operator.add, x, b.fn(F.linear, h, w["down_weight"]))


BlockFn = Callable[[_Builder, Node, Mapping[str, Node]], Node]

# kind -> (weights of one block, ops of one block, the block's code)
KINDS: dict[str, tuple[tuple[tuple[str, tuple[int, ...]], ...], int, BlockFn]] = {
    "transformer": (TRANSFORMER_WEIGHTS, TRANSFORMER_OPS, _transformer_block),
    "mlp": (MLP_WEIGHTS, MLP_OPS, _mlp_block),
}


def nodes_per_block(kind: str) -> int:
    """Ops plus weight placeholders of one block of `kind`."""
    weights, ops, _ = _kind(kind)
    return len(weights) + ops


def expected_nodes(n_blocks: int, kind: str = "transformer") -> int:
    """The node count of `repeated_blocks(n_blocks, kind)`: the blocks, the input, the output."""
    return n_blocks * nodes_per_block(kind) + 2


def blocks_for(n_nodes: int, kind: str = "transformer") -> int:
    """The block count whose graph is closest to `n_nodes` nodes (at least 2 blocks)."""
    return max(2, round((n_nodes - 2) / nodes_per_block(kind)))


def repeated_blocks(
    n_blocks: int, kind: str = "transformer", *, input_requires_grad: bool = True
) -> BlockGraph:
    """The graph of `n_blocks` residual blocks of `kind`, with example values and call sites.

    Placeholders come first (the input, then each block's weights), then the blocks in order.
    With `input_requires_grad=False` (inference on raw inputs) block 0's two uses of the input
    are keyed apart from the other blocks', so regions straddle block boundaries; torch
    finds the same groups. Raises `FxOracleError` for an unknown kind or fewer than one block.
    """
    weights, _, block = _kind(kind)
    if n_blocks < 1:
        raise FxOracleError(f"n_blocks must be at least 1, got {n_blocks}")
    b = _Builder()
    x = b.placeholder("x", (BATCH, SEQ, DIM), -1, input_requires_grad)
    params = [_weights(b, i, weights) for i in range(n_blocks)]
    for w in params:
        b.position = len(weights)
        x = block(b, x, w)
    b.graph.output(x)
    return BlockGraph(kind, n_blocks, b.graph, tuple(b.sites))


def repeated_segments(n_segments: int, per_segment: int, kind: str = "mlp") -> BlockGraph:
    """`n_segments` runs of `per_segment` blocks; each run has call sites of its own, so every
    run is a region group of its own (graphs with many groups, for the dedup benchmark)."""
    weights, _, block = _kind(kind)
    if n_segments < 1 or per_segment < 2:
        raise FxOracleError("need at least one segment of at least two blocks")
    b = _Builder()
    x = b.placeholder("x", (BATCH, SEQ, DIM), -1)
    for segment in range(n_segments):
        base = SEGMENT_STRIDE * segment
        params = [_weights(b, segment * per_segment + i, weights, base) for i in range(per_segment)]
        for w in params:
            b.position = base + len(weights)
            x = block(b, x, w)
    b.graph.output(x)
    return BlockGraph(kind, n_segments * per_segment, b.graph, tuple(b.sites))


SEGMENT_STRIDE = 1000  # call-site lines per segment


def _weights(
    b: _Builder, i: int, weights: Sequence[tuple[str, tuple[int, ...]]], base: int = 0
) -> dict[str, Node]:
    return {
        name: b.placeholder(f"b{i}_{name}", shape, base + p)
        for p, (name, shape) in enumerate(weights)
    }


def _kind(kind: str) -> tuple[tuple[tuple[str, tuple[int, ...]], ...], int, BlockFn]:
    if kind not in KINDS:
        raise FxOracleError(f"unknown block kind {kind!r}; choose one of {sorted(KINDS)}")
    return KINDS[kind]
