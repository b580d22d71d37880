"""Numbers: the transformed module computes what the original computes (CHK-6), and torch's
runtime runs it (CHK-17) (spec chapter 06).

CHK-6 runs the original and the transformed module *with every `invoke_subgraph` call running
its body directly* (`BodiesRun`: the meaning of the call, not torch's eager runtime for it) on
the same inputs (`checker.proof.number_inputs`: the example inputs first), and compares them with
the one run-and-compare (`checker.proof.runs`: outputs, inputs after the call, grad mode, the
CHK-16 tolerance). CHK-17 runs the transformed module as it is, through torch's runtime, on the
first input set: a failure there, or other numbers, with CHK-6 holding, is torch's runtime's and
the verdict is Unknown naming the op; an operand the runtime does not take is CHK-1's (RPL-21).
Where an input or a parameter requires grad, CHK-17 also compiles the transformed module for
training (`checker.proof.training`: AOTAutograd, forward and backward) and names the obligation
a rejection breaks.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Hashable
from typing import Any

import torch
import torch.fx

from checker.io.threads import one_thread
from checker.proof.draws import Draws, seeded
from checker.proof.number_inputs import InputSets, NoInputs
from checker.proof.on_cpu import moved_to_cpu
from checker.proof.runs import agreement, clone, compare_runs, settled, torch_modes_kept
from checker.proof.training import training, trains
from checker.proof.verdict import HOLDS, Holds, Unknown, Verdict, Violated
from reference.errors import describe
from reference.names import INVOKE
from reference.replace.bodies import body_key

CPU_NOTE = "run on the CPU: the graph's metadata is on CUDA and there is no CUDA device here"


def check_numbers(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    inputs: InputSets | NoInputs,
) -> Verdict:
    """Run the original, and the transformed module with its calls' bodies run directly, on the
    same inputs (`number_inputs.inputs_or_why`) and compare every output and input (CHK-6)."""
    if isinstance(inputs, NoInputs):
        return Unknown(f"CHK-6: {inputs}")
    found = inputs
    ours, theirs = _modules(original, transformed, found)
    with one_thread():
        for label, values in found.sets:
            verdict = compare_runs(ours, BodiesRun(theirs).run, values, label)
            if not isinstance(verdict, Holds):
                return verdict
    return Holds(CPU_NOTE if found.on_cpu else "")


def check_runtime(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    inputs: InputSets | NoInputs,
) -> Verdict:
    """torch's own `invoke_subgraph` runtime runs every subgraph of the transformed module and
    returns what its body computes (CHK-17). Each distinct call goes through the runtime once,
    on the first input set: a subgraph's first call, unless an earlier call had a body of the
    same structure (`reference.replace.bodies.body_key`) and operands of the same metadata, which
    the runtime treats alike (torch's eager runtime retraces the body on every call: once per
    distinct call keeps the check's cost that of the graph); a failure, or other numbers or
    `requires_grad` flags than the body's, is torch's runtime's, and the verdict is Unknown."""
    if not any(n.target is INVOKE for n in transformed.graph.nodes):
        return HOLDS
    if isinstance(inputs, NoInputs):
        return Unknown(f"CHK-17: {inputs}")
    found = inputs
    module = _modules(original, transformed, found)[1]
    label, values = found.sets[0]
    probe = _RuntimeProbe(module)
    try:
        with seeded(), contextlib.redirect_stderr(io.StringIO()), one_thread(), \
                torch_modes_kept():  # fmt: skip
            settled(probe.run(*[clone(v) for v in values]))  # CHK-19: the probe's own errors
    except Exception as e:  # told, never raised
        where = "" if probe.current is None else f" at {probe.current.name}"
        return Unknown(f"CHK-17: the transformed module raised {describe(e)}{where} {label}")
    if isinstance(probe.found, Violated):
        return Unknown(f"CHK-17: torch's invoke_subgraph runtime {probe.found.witness} {label}")
    trained: Verdict = HOLDS
    if trains(transformed, values):
        trained = training(*_modules(original, transformed, found), values)
    if not isinstance(trained, Holds):
        return trained
    notes = ([CPU_NOTE] if found.on_cpu else []) + ([trained.note] if trained.note else [])
    return Holds("; ".join(notes))


class BodiesRun(torch.fx.Interpreter):
    """Runs a module with every `invoke_subgraph` call running its body directly (what the call
    means), nested calls alike: no copy of the graph, so the cost is the graph's (CHK-6). A
    malformed call fails as it runs, and CHK-6's witness shows how."""

    def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
        if target is not INVOKE:
            return super().call_function(target, args, kwargs)
        body, _, *operands = args
        return tuple(BodiesRun(body).run(*operands))


def _modules(
    original: torch.fx.GraphModule, transformed: torch.fx.GraphModule, found: InputSets
) -> tuple[torch.fx.GraphModule, torch.fx.GraphModule]:
    if found.on_cpu:
        return moved_to_cpu(original), moved_to_cpu(transformed)
    return original, transformed


class _RuntimeProbe(torch.fx.Interpreter):
    """Runs a module; each distinct call (body structure, operand metadata) goes through
    torch's runtime once and is compared with the body run directly; other calls run the body
    directly."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__(gm)
        self.current: torch.fx.Node | None = None
        self.bodies: dict[str, Hashable] = {}  # subgraph identifier -> its body's structure
        self.seen: set[Hashable] = set()  # (body structure, operand metadata) already probed
        self.found: Verdict = HOLDS  # Violated: what torch's runtime did wrong, first

    def run_node(self, n: torch.fx.Node) -> Any:
        self.current = n
        return super().run_node(n)

    def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
        if target is not INVOKE:
            return super().call_function(target, args, kwargs)
        body, identifier, *operands = args
        before = Draws.now()  # both runs draw the same random numbers, on every device (CHK-20)
        direct = tuple(body(*[clone(o) for o in operands]))
        if identifier not in self.bodies:
            self.bodies[identifier] = body_key(body)
        probe = (self.bodies[identifier], tuple(_operand_form(o) for o in operands))
        if probe in self.seen or isinstance(self.found, Violated):
            return direct
        self.seen.add(probe)
        after = Draws.now()
        before.restore()
        try:
            ran = tuple(INVOKE(body, identifier, *operands))
        except Exception as e:  # torch's runtime failed: the verdict names it
            at = self.current.name if self.current is not None else "?"
            self.found = Violated(f"raised {describe(e)} at {at} ({identifier})")
            after.restore()
            return direct
        for k, (want, got) in enumerate(zip(direct, ran, strict=False)):
            agreed = agreement(want, got)
            if isinstance(agreed, Violated):
                self.found = Violated(f"returns {agreed.witness} for output {k} of {identifier}")
        if isinstance(self.found, Holds) and not Draws.now().same_as(after):
            self.found = Violated(f"draws other random numbers than the body of {identifier}")
        return ran


def _operand_form(value: Any) -> Hashable:
    """What the runtime sees of an operand besides its values."""
    if isinstance(value, torch.Tensor):
        return (value.dtype, tuple(value.shape), value.stride(), value.device, value.requires_grad)
    return (type(value).__qualname__, repr(value))
