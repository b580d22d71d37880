"""Replacement: one region becomes one `invoke_subgraph` call (spec chapter 03, RPL-12).

`replace_region(...)` appends the call and its getitems, re-points every external use, erases
the region and the dead nodes reading it (RPL-27), moves the erased nodes' ordering dependencies
onto the call (SRT-9, SRT-10) and updates the alias DB in place (EFF-7). Whether a region may
be replaced is `legality`'s to say.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable

import torch
import torch.fx

from reference.names import INVOKE
from reference.replace.context import OutlineContext, Takeovers
from reference.replace.dead import dead_readers
from reference.replace.plan import (
    OutlinePlan,
    Region,
    getitem_users,
    is_tuple_node,
    operands,
    output_width,
    tuple_output_spec,
)
from reference.replace.values import set_call_value

Node = torch.fx.Node
Redirect = Callable[[Node, Node], None]  # an erased node's ordering deps move to its successor


def replace_region(
    region: Region, plan: OutlinePlan, fetch: Node, context: OutlineContext, redirect: Redirect
) -> tuple[Node, list[Node]]:
    """Append `invoke_subgraph(fetch, name, *operands)`, `fetch` the subgraph's `get_attr` and
    `name` its target, re-point uses, erase the region; return the call and the nodes erased.
    `redirect(erased, to)` moves each erased node's ordering deps (SRT-9, SRT-10)."""
    graph = fetch.graph
    invoke = graph.create_node(
        "call_function", INVOKE, (fetch, str(fetch.target), *operands(region, plan)), {}
    )
    takeovers: Takeovers = []
    gone: set[Node] = set()  # erased with a tuple output's getitems
    index = 0
    for p in plan.outputs:
        node = region[p]
        if is_tuple_node(node):
            gone |= _replace_tuple_output(node, index, invoke, takeovers, redirect)
        else:
            item = graph.create_node("call_function", operator.getitem, (invoke, index), {})
            node.replace_all_uses_with(item, propagate_meta=True)
            takeovers.append((node, item))
        index += output_width(node)
    set_call_value(invoke, region, plan)
    flat = {region[i] for i in plan.flattened}
    erased = [n for n in region if n not in flat]
    erased += dead_readers(erased, context.dead)  # RPL-27: nothing live reads them
    for node in reversed(erased):
        if node not in gone:
            graph.erase_node(node)
        redirect(node, invoke)
    context.replaced(erased, invoke, takeovers)
    return invoke, erased


def _replace_tuple_output(
    node: Node, index: int, invoke: Node, takeovers: Takeovers, redirect: Redirect
) -> set[Node]:
    """Re-point each getitem chain on a tuple output to the call's flattened outputs from
    `index` on (RPL-3), recording in `takeovers` which getitem took over which; return the
    nodes erased.

    Children are visited last-in first-out and each new getitem is inserted right after the
    call, exactly as torch does, so the node order after sorting is torch's.
    """
    graph = invoke.graph
    spec = tuple_output_spec(node)
    stack: deque[tuple[Node, tuple[int, ...]]] = deque((c, (i,)) for c, i in getitem_users(node))
    erased: set[Node] = set()
    while stack:
        item, path = stack.pop()
        stack.extend((c, (*path, i)) for c, i in getitem_users(item))
        with graph.inserting_after(invoke):
            out = graph.create_node(
                "call_function", operator.getitem, (invoke, index + spec[path]), {}
            )
        item.replace_all_uses_with(out, propagate_meta=True)
        takeovers.append((item, out))
        redirect(item, out)  # may sit outside the region
        graph.erase_node(item)
        erased.add(item)
    if not node.users:  # a region node may still use the tuple whole: erased with the region
        graph.erase_node(node)
        erased.add(node)
    return erased
