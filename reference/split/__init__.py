"""`split_module`: torch.fx's graph splitter, reimplemented on a plain-data plan (spec chapter
05, SPL).

Same signature and, where torch is right, the same output as
`torch.fx.passes.split_module.split_module`; where it is wrong (B6, B7, B9, and the other
Upstream notes of the chapter) the result is correct instead. `plan_split` in
`reference.split.plan` shows the decisions without building anything.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.fx

from reference.arguments import expect
from reference.errors import FxOracleError
from reference.split.build import BuildOptions, build_split
from reference.split.plan import plan_split


def split_module(
    m: torch.fx.GraphModule,
    root_m: torch.nn.Module | None,
    split_callback: Callable[[torch.fx.Node], int],
    qualname_map: dict[str, str] | None = None,
    keep_original_order: bool = False,
    keep_original_node_name: bool = False,
    keep_original_input_name: bool = True,
    *,
    partition_affix: str | None = None,
    tuple_return: bool = False,
) -> torch.fx.GraphModule:
    """Split `m` into one submodule per partition id that `split_callback` gives its nodes.

    `root_m` is unused (as in torch). `qualname_map`, when given, is filled with
    `"submod_<id>.<target with dots as _>" -> target` for every call_module node (SPL-14).
    Raises `FxOracleError` on a non-int partition id, a cycle between partitions, decreasing
    ids with grad-mode or autocast nodes, or malformed global-state calls.
    """
    expect(m, torch.fx.GraphModule, "split_module: m")  # FIL-6
    if not callable(split_callback):
        raise FxOracleError("split_module: split_callback must be callable")
    del root_m
    plan = plan_split(m, split_callback, keep_original_order=bool(keep_original_order))
    options = BuildOptions(
        keep_original_order=bool(keep_original_order),
        keep_original_node_name=bool(keep_original_node_name),
        keep_original_input_name=keep_original_input_name,
        partition_affix=partition_affix,
        tuple_return=tuple_return,
    )
    return build_split(m, plan, options, qualname_map)
