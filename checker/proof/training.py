"""Torch's training runtime (CHK-17, spec chapter 06): a transformed module whose inputs or
parameters require grad is compiled through AOTAutograd (`aot_module_simplified`, as a compile
stack such as `aot_eager` does), run forward and backward; what it rejects is named by the
obligation it breaks; a failure of the transformed module alone that no obligation explains is
unknown too, quoting it.

Only a module with an `invoke_subgraph` call is compiled (the transformation's calls are what
AOTAutograd may reject), and the original is compiled too only when the transformed one fails:
a failure both share is not the transformation's.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx
from torch.utils._pytree import tree_leaves

from checker.io.threads import one_thread
from checker.proof.runs import clone, settled, torch_modes_kept
from checker.proof.verdict import HOLDS, Holds, Unknown, Verdict, Violated
from reference.errors import describe

# what AOTAutograd's invoke_subgraph rule says, and the obligation a transformation broke
REJECTIONS: tuple[tuple[str, str], ...] = (
    ("in-place input or buffer mutations", "a subgraph writes an operand (RPL-7, CHK-15)"),
    ("might be aliasing the input or the output", "a subgraph's operands or results alias (RPL-8)"),
    ("only contains tensors or None", "a subgraph returns a value that is not a tensor (RPL-23)"),
    ("modified by an inplace operation", "a later write of a saved operand (RPL-28, CHK-22)"),
)


def trains(module: torch.nn.Module, inputs: Sequence[Any]) -> bool:
    """Whether a training compile applies: an input or a parameter requires grad."""
    found = any(isinstance(v, torch.Tensor) and v.requires_grad for v in inputs)
    return found or any(p.requires_grad for p in module.parameters())


def training(
    original: torch.fx.GraphModule, transformed: torch.fx.GraphModule, inputs: Sequence[Any]
) -> Verdict:
    """Whether torch's training runtime takes `transformed` as it takes `original` (CHK-17):
    HOLDS when it does (or rejects both); when it rejects only `transformed`, `Unknown` naming
    the obligation broken where one explains it, else `Unknown` quoting the failure."""
    if not returns_tuple(transformed):
        return Holds(NO_TUPLE)
    compiled = compile_and_train(transformed, inputs)
    if not isinstance(compiled, Violated):
        return HOLDS
    if not isinstance(compile_and_train(original, inputs), Holds):
        return HOLDS  # the original fails too: not the transformation's doing
    failure = compiled.witness
    broken = next((why for words, why in REJECTIONS if words in failure), "")
    if broken:
        return Unknown(
            f"CHK-17: torch's training runtime (AOTAutograd) rejects {broken}: {failure}"
        )
    return Unknown(
        f"CHK-17: torch's training runtime (AOTAutograd) fails on the transformed module only: "
        f"{failure}"
    )


NO_TUPLE = (
    "not compiled for training: the graph returns no tuple, and AOTAutograd's "
    "`aot_module_simplified` takes only tuple outputs (Dynamo's graphs have them)"
)


def returns_tuple(module: torch.fx.GraphModule) -> bool:
    """Whether `module`'s graph returns a tuple or list, as `aot_module_simplified` requires."""
    (out,) = module.graph.find_nodes(op="output")
    return isinstance(out.args[0], (tuple, list))


def compile_and_train(module: torch.fx.GraphModule, inputs: Sequence[Any]) -> Verdict:
    """`module` through `aot_module_simplified` with no-op compilers, forward, then backward of
    every output that requires grad: HOLDS when it all runs, else `Violated` with the one-line
    description of what it raised."""
    from torch._functorch.aot_autograd import aot_module_simplified

    values = [clone(v) for v in inputs]
    try:
        with contextlib.redirect_stderr(io.StringIO()), one_thread(), torch_modes_kept():
            torch.set_grad_enabled(True)
            compiled = aot_module_simplified(
                module, values, fw_compiler=no_op_compiler, bw_compiler=no_op_compiler
            )
            outputs = [t for t in tree_leaves(compiled(*values)) if _differentiable(t)]
            if outputs:
                torch.autograd.backward(outputs, [torch.ones_like(t) for t in outputs])
            settled(values)  # CHK-19: what the forward and backward kernels raise is this run's
    except Exception as e:  # torch's training runtime failed: the verdict names it
        return Violated(describe(e))
    return HOLDS


def no_op_compiler(gm: torch.fx.GraphModule, example_inputs: Sequence[object]) -> Any:
    """What `aot_eager`'s compilers do: run the graph as it is now. Its code is generated again
    first, as torch's `boxed_nop` does: on CUDA the partitioner adds graph-safe RNG inputs for
    an `invoke_subgraph` with random ops (`thread_graphsafe_rng_from_hops`) after the last
    codegen, so the module's `forward` would take fewer arguments than the runtime passes."""
    from torch._functorch._aot_autograd.utils import make_boxed_func

    gm.recompile()
    return make_boxed_func(gm.forward)


def _differentiable(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.requires_grad
