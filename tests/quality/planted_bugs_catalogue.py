"""The catalogue of bugs the quality tests plant (spec chapter 06, CHK-8; the tests are in
`tests/quality/test_planted_bugs.py`).

Each edit takes a copy of a correct transformed module and its copied extra deps, and plants
one bug in place. Each `Plant` names its base as `kind:corpus file` (`ours` for our
deduplication, `torch` for torch's, `split` for `split_module` into three partitions), its
edit, and the obligations that must be violated: `expected` plus the consequences in `also`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import torch
import torch.fx

Node = torch.fx.Node
GM = torch.fx.GraphModule
Deps = dict[Node, list[Node]]


def n(gm: GM, name: str) -> Node:
    found: Node = next(node for node in gm.graph.nodes if node.name == name)
    return found


def child(gm: GM, name: str) -> GM:
    found = getattr(gm, name)
    assert isinstance(found, GM)
    return found


def sub(gm: GM, module: str, name: str) -> Node:
    return n(child(gm, module), name)


def set_arg(node: Node, index: int, value: torch.fx.node.Argument) -> None:
    args = list(node.args)
    args[index] = value
    node.args = tuple(args)


# The edits. Each takes the copied module and its (copied) extra deps, and plants one bug.


def swap_operands(gm: GM, deps: Deps) -> None:
    node = sub(gm, "subgraph_0", "sub")  # x - mean -> mean - x
    node.args = (node.args[1], node.args[0])


def change_constant(gm: GM, deps: Deps) -> None:
    set_arg(sub(gm, "subgraph_0", "h"), 1, 3)


def tiny_constant(gm: GM, deps: Deps) -> None:
    set_arg(sub(gm, "subgraph_0", "mul"), 1, 1.5000000015)  # 1.5 * (1 + 1e-9)


def change_method(gm: GM, deps: Deps) -> None:
    sub(gm, "subgraph_1", "cos_1").target = "sin"


def wrong_index(gm: GM, deps: Deps) -> None:
    set_arg(n(gm, "getitem"), 1, 1)


def wrong_call(gm: GM, deps: Deps) -> None:
    set_arg(n(gm, "getitem_2"), 0, n(gm, "invoke_subgraph"))


def mutation_after_reader(gm: GM, deps: Deps) -> None:
    n(gm, "invoke_subgraph").append(n(gm, "mul_"))


def deps_cycle(gm: GM, deps: Deps) -> None:
    deps[n(gm, "mul_")] = [n(gm, "getitem")]  # the invoke follows mul_, which follows its getitem


def data_cycle(gm: GM, deps: Deps) -> None:
    set_arg(n(gm, "invoke_subgraph"), 2, n(gm, "getitem_3"))


def drop_input(gm: GM, deps: Deps) -> None:
    n(gm, "l_y_").replace_all_uses_with(n(gm, "l_x_"))
    gm.graph.erase_node(n(gm, "l_y_"))


def swap_partitions(gm: GM, deps: Deps) -> None:
    n(gm, "submod_0").prepend(n(gm, "submod_1"))


def swap_module_operands(gm: GM, deps: Deps) -> None:
    node = n(gm, "submod_0")
    node.args = (node.args[0], node.args[2], node.args[1])


def split_constant(gm: GM, deps: Deps) -> None:
    set_arg(sub(gm, "submod_0", "mul"), 1, 3)


def split_output(gm: GM, deps: Deps) -> None:
    body = child(gm, "submod_1")
    n(body, "output").args = ((n(body, "add"), n(body, "add")),)


def wrong_name(gm: GM, deps: Deps) -> None:
    set_arg(n(gm, "invoke_subgraph_1"), 1, "subgraph_7")


def wrong_subgraph(gm: GM, deps: Deps) -> None:
    set_arg(n(gm, "invoke_subgraph_4"), 0, n(gm, "subgraph_0"))


def missing_operand(gm: GM, deps: Deps) -> None:
    node = n(gm, "invoke_subgraph_1")
    node.args = node.args[:-1]


def getitem_out_of_range(gm: GM, deps: Deps) -> None:
    set_arg(n(gm, "getitem_1"), 1, 5)


def swap_outputs(gm: GM, deps: Deps) -> None:
    output = n(gm, "output")
    first, second, *rest = cast(tuple[Node, ...], output.args[0])
    output.args = ((second, first, *rest),)


def extra_mutation(gm: GM, deps: Deps) -> None:
    with gm.graph.inserting_after(n(gm, "mul_")):
        gm.graph.call_method("mul_", (n(gm, "l_x_"), 2))


def leave_grad(gm: GM, deps: Deps) -> None:
    n(gm, "_set_grad_enabled").append(n(gm, "invoke_subgraph_2"))


def enter_late(gm: GM, deps: Deps) -> None:
    n(gm, "_exit_autocast").prepend(n(gm, "invoke_subgraph_1"))


def other_operand(name: str, k: int, operand: str) -> Callable[[GM, Deps], None]:
    """Operand `k` of call `name` becomes node `operand`."""

    def edit(gm: GM, deps: Deps) -> None:
        set_arg(n(gm, name), 2 + k, n(gm, operand))

    return edit


def change_target(gm: GM, deps: Deps) -> None:
    sub(gm, "subgraph_0", "x0").target = operator.sub


def mutation_before_reader(gm: GM, deps: Deps) -> None:
    n(gm, "invoke_subgraph").prepend(n(gm, "mul_"))


@dataclass(frozen=True, slots=True)
class Plant:
    """One planted bug: where, what, and which obligations must be violated."""

    name: str
    source: str
    edit: Callable[[GM, Deps], None]
    expected: str
    also: frozenset[str] = field(default_factory=frozenset)


def plant(
    name: str, source: str, edit: Callable[[GM, Deps], None], expected: str, *also: str
) -> Plant:
    return Plant(name, source, edit, expected, frozenset(also))


TWO = "ours:own_tuple_two_values.py"
OUTSIDE = "ours:own_inplace_input_outside.py"
LOOP = "ours:own_loop_call_site.py"
D03 = "ours:d03_multiple_subgraphs.py"
MLP = "split:own_residual_mlp.py"
T01 = "torch:t01_single_region_group.py"
DYN = "ours:own_dynamic.py"
D15 = "torch:d15_mutation_ordering.py"
NUM_FLOW = ("CHK-3", "CHK-6")  # a wrong operand also breaks dataflow and numbers
# operand 0 of the second call becomes y: another dtype (own_dtypes), other symbols (own_dynamic)
y_into_call_1 = other_operand("invoke_subgraph_1", 0, "l_y_")
y_for_o1 = other_operand("invoke_subgraph_1", 1, "l_y_")  # t01: y instead of sin(y)
PLANTS = [
    plant("swapped operands", TWO, swap_operands, "CHK-3", "CHK-6"),
    plant("changed constant", TWO, change_constant, "CHK-3", "CHK-6"),
    plant("constant off by 1e-9", LOOP, tiny_constant, "CHK-3"),
    plant("changed method", D03, change_method, "CHK-3", "CHK-6"),
    plant("wrong getitem index", TWO, wrong_index, "CHK-3", "CHK-6"),
    plant("result of the wrong call", TWO, wrong_call, "CHK-3", "CHK-6"),
    plant("mutation after its reader", OUTSIDE, mutation_after_reader, "CHK-4", "CHK-6"),
    plant("cycle through extra deps", OUTSIDE, deps_cycle, "CHK-2"),
    plant("data cycle", LOOP, data_cycle, "CHK-2", "CHK-1", "CHK-6"),
    plant("dropped input", D03, drop_input, "CHK-3", "CHK-1", "CHK-5", "CHK-6"),  # x passed twice
    plant("swapped partitions", MLP, swap_partitions, "CHK-1", "CHK-6"),
    plant("swapped module operands", MLP, swap_module_operands, "CHK-3", "CHK-5", "CHK-6"),
    plant("constant in a partition", "split:own_dynamic.py", split_constant, "CHK-3", "CHK-6"),
    plant("partition returns twice", MLP, split_output, "CHK-3", "CHK-6"),
    plant("wrong subgraph name", TWO, wrong_name, "CHK-1"),
    plant("wrong subgraph called", D03, wrong_subgraph, "CHK-1", "CHK-3", "CHK-6"),
    plant("missing operand", "ours:own_residual_mlp.py", missing_operand, "CHK-1", "CHK-6"),
    plant("getitem out of range", TWO, getitem_out_of_range, "CHK-1", "CHK-6"),
    plant("swapped graph outputs", TWO, swap_outputs, "CHK-3", "CHK-6"),
    plant("extra mutation", OUTSIDE, extra_mutation, "CHK-3", "CHK-6"),
    plant("grad mode left early", "ours:own_grad_modes.py", leave_grad, "CHK-4", "CHK-6"),
    plant("autocast entered late", "ours:own_autocast_bf16.py", enter_late, "CHK-4", "CHK-6"),
    plant("operand of another dtype", "ours:own_dtypes.py", y_into_call_1, "CHK-5", *NUM_FLOW),
    plant("operand of other symbolic sizes", DYN, y_into_call_1, "CHK-5", *NUM_FLOW),
    plant("torch: wrong operand", T01, y_for_o1, "CHK-3", "CHK-6"),
    plant("torch: changed target", T01, change_target, "CHK-3", "CHK-6"),
    plant("torch: mutation before reader", D15, mutation_before_reader, "CHK-4", "CHK-6"),
]
