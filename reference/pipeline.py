"""The reference pipeline on one graph, top to bottom: start reading here.

    deduplicate_graph(gm)                        the whole pass, in place
      1. track    track_graph                  reference/track    chapter 01
      2. expand   search_regions               reference/expand   chapter 02
      3. replace  outline_group                reference/replace  chapter 03
                  (the gate hook, `gate=`, may veto a group: checker/proof/gate.py is one)
      4. sort     stable_topological_sort      reference/sort     chapter 04

Keying gives every node a key; nodes with equal keys compute the same thing. Expansion grows
regions from such nodes in lock-step into groups of identical regions. Outlining takes each
group in turn: plan its subgraph, ask the rules in `Refusal`'s order (the gate hook among them,
after the whole-group rules) which regions they refuse, build the subgraph and replace each
region left by a call. Ordering sorts the graph once, stably, keeping
the extra dependencies that writes, aliases, draws and global-state switches impose.

What each node reads, writes, switches and draws (chapter 09, `reference/effects`) is what steps
3 and 4 consult: the alias DB says which regions may be replaced and which orders are legal.
`split_module` (chapter 05, `reference/split`) is a separate tool run on any graph module; the
Dynamo adapters (`reference/dynamo`) run steps 2 to 4 inside `torch.compile`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial

import torch
import torch.fx

from reference.arguments import expect, expect_method
from reference.effects.alias_db import AliasDB
from reference.expand.regions import RegionSearch, search_regions
from reference.fast.cycle import FastContraction
from reference.policy import RIGHT, Policy
from reference.replace.cycle import Contraction
from reference.replace.legality import OutlineContext
from reference.replace.outliner import (
    DedupResult,
    Gate,
    Installer,
    ModuleInstaller,
    Outlining,
    outline_group,
)
from reference.replace.plan import Groups
from reference.sort.deps import ordering_deps, pinned_targets
from reference.sort.stable import stable_topological_sort
from reference.track.offline import track_graph
from reference.track.tracker import GraphRegionTracker

Node = torch.fx.Node


def deduplicate_graph(
    gm: torch.fx.GraphModule, gate: Gate | None = None, *, policy: Policy = RIGHT
) -> DedupResult:
    """The whole pipeline on a captured graph module, in place: key every node (1), then
    `deduplicate` (2 to 4)."""
    return deduplicate(gm, track_graph(gm.graph), gate, policy=policy)


def deduplicate(
    gm: torch.fx.GraphModule,
    tracker: GraphRegionTracker,
    gate: Gate | None = None,
    *,
    policy: Policy = RIGHT,
    search: RegionSearch | None = None,
    fast: bool = False,
) -> DedupResult:
    """Find `tracker`'s region groups in `gm` (2) and outline them (3, 4), in place, as torch's
    `apply_graph_deduplication` does (spec chapter 03, RPL).

    `gate(group, plan)` may veto a group before anything changes: it returns `HOLDS`, or a
    `Veto` naming the first region it cannot prove safe (RPL-11). A `policy` other than the
    default follows torch in some of its rules (`reference.policy`), for comparison only.
    `search`, when given, is `search_regions(gm.graph, tracker.buckets())`; `fast` takes the
    speed-ups of `reference.fast` in the search, the cycle refusal and the sort (the same
    result: `tests/reference/test_fast_paths.py`).
    """
    expect(gm, torch.fx.GraphModule, "deduplicate: gm")  # FIL-6
    expect_method(tracker, "buckets", "deduplicate: tracker")
    if search is None:
        search = search_regions(gm.graph, tracker.buckets(), fast=fast)
    writes = tracker.node_to_mutated_arg_positions
    return outline_groups(gm, search.region_groups(), writes, gate, policy=policy, fast=fast)


def outline_groups(
    gm: torch.fx.GraphModule,
    groups: Groups,
    writes: Mapping[Node, Iterable[int]],
    gate: Gate | None = None,
    *,
    policy: Policy = RIGHT,
    fast: bool = False,
) -> DedupResult:
    """Steps 3 and 4 on a graph module: `outline` with subgraphs registered on `gm`."""
    found = outline(gm.graph, ModuleInstaller(gm), groups, writes, gate, policy=policy, fast=fast)
    gm.recompile()
    return found


def outline(
    graph: torch.fx.Graph,
    installer: Installer,
    groups: Groups,
    writes: Mapping[Node, Iterable[int]],
    gate: Gate | None = None,
    *,
    policy: Policy = RIGHT,
    fast: bool = False,
) -> DedupResult:
    """Steps 3 and 4 on a bare graph, each group's subgraph going to `installer`: outline the
    groups one by one in torch's order, then sort once (SRT-1). The policy is read here (the
    replacer's switches: `keep_erased_deps`, SRT-10; `refuse_cycles`, RPL-25) and in
    `reference.sort.rules` (the sort's rules and pinned switches), nowhere else: the phases
    get what it decides as data."""
    db = AliasDB(graph, {n: tuple(sorted(p)) for n, p in writes.items()})  # chapter 09
    deps = ordering_deps(graph, writes, policy, db)  # what the sort must keep (SRT-6..SRT-13)
    grouped = (n for group in groups for region in group for n in region)
    context = OutlineContext(graph, db, pinned_targets(policy), grouped)  # RPL-16
    redirect = partial(deps.redirect, keep_erased_deps=policy.keep_erased_deps)  # SRT-10
    contract = FastContraction if fast else Contraction
    cycles = contract(graph, deps.as_mapping()) if policy.refuse_cycles else None  # RPL-25
    run = Outlining(graph, installer, context, redirect, cycles, gate)
    outcomes = [outline_group(run, index, group) for index, group in enumerate(groups)]  # 3.
    stable_topological_sort(graph, deps.as_mapping(), fast=fast)  # 4. order
    graph.lint()
    return DedupResult.of(outcomes, deps.as_mapping())
