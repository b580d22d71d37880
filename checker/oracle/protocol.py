"""The plug-in contract: what an implementation under test provides, and what it is given (spec
chapter 08, DIF-1). Import from here: `from checker.oracle.protocol import DedupOutput, ...`.

An implementation is any object with one or more of four methods, one per component:

  find_regions(graph: CapturedGraph) -> region groups           (component `tracker`)
  deduplicate(graph: CapturedGraph)  -> DedupOutput             (component `dedup`)
  stable_sort(graph: fx.Graph, deps) -> None, reorders in place (component `sort`)
  split(gm, callback, keep_original_order, partition_affix) -> GraphModule  (`split`)

fxoracle captures every model once (Dynamo, fullgraph, deduplication on, the pass replaced by a
recorder: `reference.dynamo.capture.capture`), so a plug-in never captures anything itself. Each
call gets its OWN copy: a method may edit what it is given (a pass edits the graph in place, as
torch's does) and nothing it does reaches the other side. What each method receives, returns and may
change is in its Protocol's docstring; `checker/oracle/plugins/` holds a runnable example.

Seven things a plug-in author asked (spec chapter 08, DIF-30; chapter 11):

1. Capturing a model and calling one's own pass outside `diff`: `checker.oracle.diff.author`
   (`capture_model(path)` captures a model file, static or dynamic as the file says, into a
   `CapturedGraph`; `judge_dedup(graph, output)` judges one's `DedupOutput` as `diff` does;
   `diff_pass(pass_, path, component)` compares with the reference per component;
   `assert_agrees(pass_, path, component=...)` fails a pytest test with the divergence text).
2. `invoke_subgraph` operands must be tensors, ints, `SymInt`s (or generators): torch's
   runtime takes nothing else, so a region whose outside input is anything else (a tuple, a
   float, None) cannot be outlined (`Deduplicates`).
3. `storage_of(value)` results are hashable and equal by storage (views share their base's):
   dict keys and set members.
4. The call needs nothing in `meta` beyond what the body's nodes carry (`meta["val"]`);
   setting `example_value` on the call (the tuple of its outputs' values) and on each getitem
   (its element) keeps later passes and the checker's shape check informed (`Deduplicates`).
5. The `sort` component gets a scrambled graph and torch's ordering deps, which order no random
   draw (torch's do not): a sort is judged on its data and `deps` only; draw order is judged
   in `dedup`, where the meaning form versions the generator (DIF-29).
6. A draw is `reference.effects.node_effects.draws(node)`: an op tagged
   `nondeterministic_seeded`, or a function or method named in `RANDOM_NAMES` (`rand`,
   `randn`, `rand_like`, `dropout`, `bernoulli`, `normal`, ...), or a call whose body draws
   (spec chapter 09, EFF-4).
7. A random model's source is `checker.oracle.campaign.randmodels.random_source(seed, index)`
   (model `random_<seed>_<index>` of `--random`/`fuzz`); a campaign's findings file and every
   repro hold the (shrunk) source too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch
import torch.fx

from reference.track.keys import ORIGIN_META as ORIGIN_META
from reference.track.keys import CallSite as CallSite
from reference.track.keys import GlobalState as GlobalState
from reference.track.keys import Origin as Origin
from reference.track.tracker import GraphRegionTracker

Node = torch.fx.Node
RegionGroups = tuple[tuple[tuple[str, ...], ...], ...]  # groups, regions, node names
Buckets = tuple[tuple[str, ...], ...]  # DedupOutput.buckets: node names, 2 or more per bucket
Callback = Callable[[Node], int]


class CapturedGraph(Protocol):
    """What `find_regions` and `deduplicate` receive: one capture of the model, a fresh copy
    per call (DIF-1, DIF-21). Everything a pass with its own key needs is here; read nothing
    else (a `Capture` has fxoracle-internal members, such as `torch_tracker`, which only the
    `torch` side reads and which is `None` in a plug-in's run).

    - `gm`: the graph module as torch's pass receives it (Dynamo, fullgraph). Node metadata:
      `example_value` (a `FakeTensor`, a tuple of them, a `SymInt`, or None; the fake mode is
      not active when a method runs), `stack_trace` (the user's frames, torch's own files left
      out), `nn_module_stack`, and `node.meta[ORIGIN_META]` (see `tracker.origin`).
    - `example_inputs`: one real value per placeholder, in placeholder order (parameters and
      buffers included), cloned for this call.
    - `dynamic`: captured with dynamic shapes (sizes in `example_value` are `SymInt`s).
    - `tracker`: fxoracle's keys of `gm`'s nodes. Three members are the contract:
      - `tracker.buckets().groups`: every bucket of key-equal nodes, a tuple of node tuples,
        buckets in tracking order, nodes in graph order. Single-node buckets are included, and
        so are placeholders (keyed like any node; torch's pass never puts one in a region).
      - `tracker.node_to_mutated_arg_positions`: `node -> positions it writes in place`, as
        Dynamo's version counters saw them. A position indexes the node's *flat node
        arguments*: the `Node`s of `(node.args, node.kwargs)` in `torch.fx.map_arg` order,
        constants skipped (torch's `_get_flat_args`). `x.add_(y)`: `{0}`; `setitem(t, i, v)`
        with a node `i`: `{0}`; `torch.add(a, b, out=c)`: `{2}`. A node that writes nothing
        is absent.
      - `tracker.origin(node)`: `Origin(call_site, global_state)`, what torch's key has beside
        the metadata: `call_site` is a `CallSite(filename, line, offset)` of the user's code
        at tracking time (`offset` the bytecode offset, so two calls on one line differ), and
        `global_state` the `GlobalState` it was keyed under (grad mode, autocast-relevant
        flags, default dtype, ...). None for a node that was not keyed. Both are frozen
        dataclasses: hashable, equal by value.

    What else a node does is fxoracle's one definition (spec chapter 09), which a pass may
    import rather than guess: `reference.effects.node_effects.draws(node)` (it draws from the
    global generator), `switch(node)` (the global state it switches: grad mode, autocast, ...,
    or None) and `storage_of(value)` (the storage a tensor or fake tensor lives in, comparable
    with `==` and hashable: views share their base's). A draw is an op tagged
    `nondeterministic_seeded` or a function or method of `node_effects.RANDOM_NAMES`.

    Methods run in one state for both sides: grad mode on (unless the model file switched it
    off when imported), no inference mode, no autocast, no fake-tensor or other dispatch mode
    active, outside any Dynamo compilation, the process's default dtype. `deduplicate` need
    not call `recompile()`: fxoracle recompiles `DedupOutput.transformed` before running it.
    """

    @property
    def gm(self) -> torch.fx.GraphModule: ...

    @property
    def example_inputs(self) -> tuple[Any, ...]: ...

    @property
    def dynamic(self) -> bool: ...

    @property
    def tracker(self) -> GraphRegionTracker: ...


@dataclass(frozen=True, slots=True, eq=False)
class DedupOutput:
    """What `deduplicate` returns.

    What the oracle does with each field:

    - `transformed` (checked): the graph module after the pass: the `graph.gm` it was given,
      edited in place, or a new module. It is compared by meaning with the reference's, run
      on `graph.example_inputs` against the original (its `invoke_subgraph` calls as torch's
      runtime runs them) and checked by `check_transformation` (chapter 06).
    - `groups` (form checked, then shown): the region groups the pass outlined, as node names
      of `graph.gm` (`()`: not said). A malformed value, or a name that is no node of
      `graph.gm`, is a `contract` divergence (DIF-12); otherwise
      the report only notes when they differ from the reference's. A region finder reports
      its groups through `find_regions`, which is judged.
    - `extra_deps` (checked): `node -> nodes it must follow`, nodes of `transformed`, if the
      pass keeps ordering dependencies (torch's `_populate_additional_deps`); they join the
      checker's acyclicity and dependency checks. `None`: not known.
    - `buckets` (checked): the pass's buckets of key-equal nodes (two or more, node names),
      if it says. When both sides' region groups are valid but differ, a bucket that merges
      nodes computing different things is reported (TRK-5).
    - `refusals` (shown): one line per region the pass left alone, and why; where the graphs
      differ, the report shows how many and the first (`X said (2 refusals): ...`).
    """

    transformed: torch.fx.GraphModule
    groups: RegionGroups = ()
    extra_deps: Mapping[Node, Sequence[Node]] | None = None
    buckets: Buckets = ()
    refusals: tuple[str, ...] = ()


@runtime_checkable
class FindsRegions(Protocol):
    def find_regions(self, graph: CapturedGraph) -> RegionGroups:
        """Region groups of `graph.gm`: groups, each a sequence of regions, each a sequence of
        node names (or nodes) of `graph.gm`; corresponding positions must be key-equal. A name
        that is no node of `graph.gm` breaks the contract (DIF-12).

        Receives a copy (`CapturedGraph`: the graph, fxoracle's keys, mutation facts, each
        node's call site and global state). A finder with its own key reads them and node
        metadata. Order: torch's (latest group first, region 0 in graph order); groups are
        compared as given. A node name that `graph.gm` lacks breaks the contract.
        """
        ...


@runtime_checkable
class Deduplicates(Protocol):
    def deduplicate(self, graph: CapturedGraph) -> DedupOutput:
        """Outline identical regions of `graph.gm` into `invoke_subgraph` calls.

        Receives a copy (see `FindsRegions`) and may edit `graph.gm` in place: add nodes,
        erase the regions it replaces, register subgraph modules, reorder. It must not change
        what the graph computes, nor mutate a graph input inside a subgraph (torch's runtime
        rejects that, CHK-15).

        A call is torch's: `gm.register_module(name, body)` with `body` a `GraphModule` whose
        output is a tuple, fetched by `fetch = gm.graph.get_attr(name)`, then
        `call = gm.graph.call_function(torch.ops.higher_order.invoke_subgraph, (fetch, name,
        *operands))` and one `operator.getitem(call, k)` per output. Operands are tensors,
        ints or `SymInt`s (torch's runtime takes nothing else). Body nodes carry
        `meta["val"]` (the region's `example_value`), which torch's runtime reads; the call's
        `meta["example_value"]` (the tuple of its outputs' values) and each getitem's (its
        element) are not required, and keep later passes informed. Region names in
        `DedupOutput.groups` are those of the graph as given, before any edit.
        """
        ...


@runtime_checkable
class Sorts(Protocol):
    def stable_sort(self, graph: torch.fx.Graph, deps: Mapping[Node, Sequence[Node]]) -> None:
        """Reorder `graph` in place into a topological order that also puts every node after
        `deps[node]` (nodes of `graph`), moving as little as it can (SRT-1..SRT-5).

        May only move nodes: adding or erasing one is a contract violation. Receives a
        scrambled copy of the captured graph and torch's ordering deps for it (mutation order,
        autocast pins), which order no random draw: draw order is judged in `dedup`.
        """
        ...


@runtime_checkable
class Splits(Protocol):
    def split(
        self,
        gm: torch.fx.GraphModule,
        callback: Callback,
        keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:
        """`torch.fx.passes.split_module.split_module(gm, None, callback,
        keep_original_order=..., partition_affix=...)`: a module whose `submod_<i>` children
        compute `gm` partition by partition. Receives a copy of the captured graph; raising
        (any exception) means "refused": it agrees with a refusing reference, and where the
        reference splits, its split is judged: right, the refusal is a `refusal` of a valid case
        blamed on the plug-in; wrong, the reference is blamed (DIF-22). `NotImplementedError`
        means "this case is outside what I support" and skips it.
        """
        ...


PARTS: tuple[tuple[str, type], ...] = (
    ("tracker", FindsRegions), ("dedup", Deduplicates), ("sort", Sorts), ("split", Splits),
)  # fmt: skip


def parts_of(impl: object) -> tuple[str, ...]:
    """The components `impl` implements, in `PARTS` order (DIF-1)."""
    return tuple(name for name, proto in PARTS if isinstance(impl, proto))
