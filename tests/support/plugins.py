"""Plug-ins for the oracle's tests (spec chapter 08, DIF-22 to DIF-26): splitters, an honest
one that calls partitions in another valid order, one that refuses everything, one whose output
is wrong, and the reference's split with one edit each, right (a permuted signature, the calls'
arguments permuted with it) or wrong (a permuted signature alone, a getitem taking another
output); and a region finder that finds fewer groups. Loadable by `--against`:

    python -m checker.cli diff --random 200 --against tests.support.plugins:OtherOrder
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator

import torch
import torch.fx

from checker.oracle.plugins.example import Example
from checker.oracle.plugins.planted import EditedSplit
from checker.oracle.protocol import Callback, CapturedGraph, RegionGroups
from reference.errors import FxOracleError
from reference.split.build import BuildOptions, build_split
from reference.split.plan import plan_split

Node = torch.fx.Node


class OtherOrder:
    """The reference's partitions, called in the first-appearance topological order (the
    order the reference uses with `keep_original_order=True`) instead of torch's LIFO one."""

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        plan = plan_split(gm, callback, keep_original_order)
        with contextlib.suppress(FxOracleError):  # no such order: the plan's own
            plan = dataclasses.replace(plan, order=plan_split(gm, callback, True).order)
        options = BuildOptions(keep_original_order, partition_affix=partition_affix)
        return build_split(gm, plan, options, None)


class Refuses:
    """Refuses every split, by raising (DIF-22)."""

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        raise ValueError("this splitter splits nothing")


class Scales:
    """Returns the graph itself, its first output doubled: wrong whatever the case."""

    def split(
        self, gm: torch.fx.GraphModule, callback: Callback, keep_original_order: bool,
        partition_affix: str | None,
    ) -> torch.fx.GraphModule:  # fmt: skip
        output = next(n for n in gm.graph.nodes if n.op == "output")
        first = output.args[0][0]
        with gm.graph.inserting_before(output):
            doubled = gm.graph.call_function(operator.mul, (first, 2))
        output.args = ((doubled, *output.args[0][1:]),)
        gm.recompile()
        return gm


class FewerGroups(Example):
    """The example's region finder, its last group left out: a valid, smaller grouping."""

    def find_regions(self, graph: CapturedGraph) -> RegionGroups:
        return super().find_regions(graph)[:-1]


class PermutesSignature(EditedSplit):
    """The first submodule with two inputs takes them in the other order, and its call passes
    them so: the same computation."""

    fix_calls = True

    def edit(self, split: torch.fx.GraphModule, keep_original_order: bool) -> None:
        call = next(n for n in split.graph.nodes if n.op == "call_module" and len(n.args) > 1)
        sub = split.get_submodule(str(call.target))
        assert isinstance(sub, torch.fx.GraphModule)
        inputs = [n for n in sub.graph.nodes if n.op == "placeholder"]
        body = next(n for n in sub.graph.nodes if n.op != "placeholder")
        for placeholder in reversed(inputs):
            body.prepend(placeholder)
        sub.recompile()
        if self.fix_calls:
            call.args = tuple(reversed(call.args))


class WrongSignature(PermutesSignature):
    """The permuted signature without its calls: operands swapped."""

    fix_calls = False


class WrongGetitem(EditedSplit):
    """A getitem of a submodule's outputs takes the next output instead."""

    def edit(self, split: torch.fx.GraphModule, keep_original_order: bool) -> None:
        taken = [n for n in split.graph.nodes if n.target is operator.getitem]
        first = next(n for n in taken if n.args[1] == 0 and any(u.args[1] == 1 for u in taken))
        first.args = (first.args[0], 1)
