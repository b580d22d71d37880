"""Random models built for deduplication (spec chapter 08, DIF-6).

A model is one helper `block(h, g, s, f, m)` called two to four times, with small variations
between the calls: the float constant `s`, the target `f`, the rounding mode `m` (all three are
absent from torch's key), the operands (graph inputs or earlier results, sometimes the same
tensor twice), and a `no_grad` or `autocast` around a call. The inputs vary in shape, dtype and
requires_grad, and the model may be captured with symbolic sizes. Block statements come from a
small grammar of shape-preserving ops: unary ops, constants, kwargs, in-place updates (some
unused, as in B13), views, tuples (`chunk`/`cat`), reductions and a matmul; a third of the
blocks also update their second input in place (a graph input, or an earlier call's result),
so the order of updates and reads matters across regions.

Aliasing across regions (chapter 09), drawn last so that earlier models keep their choices: a
view `v` of a graph input made once and passed as some calls' second operand, with in-place
writes of its base (directly, through another view, or by `setitem`) between calls; a call whose
second operand is a view of its first (operands sharing storage); and, for a block returning a
pair, a model that keeps a different element of each call's result (regions of one group whose
external outputs differ).

Random draws (chapter 09, EFF-4), drawn after everything else so that a model drawing nothing
keeps every earlier choice: every model of the `draws` family and half of the `dynamic` one get
one or two draws in the block (`DRAWS`: `rand`, `rand_like`, `randn`, `dropout` in train mode,
`bernoulli`, `normal`, one in place, one through a view), among its views, in-place updates and
the calls' `no_grad` and `autocast` blocks, and half of those a draw before the first call
(`MODEL_DRAWS`; always in `draws`). The other families' twins draw nothing.

Construct families (`FAMILIES`): on top of its random choices, each model is made to hold one
family of constructs that users write and passes get wrong: `constants` (calls that differ by
their float constant only, which the block passes as `alpha`: B1; twins with different ones),
`written_views` (the twins read a view `v` of a graph input, whose base is then written through
a view), `shared_operands` (each twin's second operand views its first), `several_outputs` (the
block returns a pair; the model keeps the first element of call 0 and the second of call 1),
`input_view_writes` (the block writes a view of its second input), `draws` (twins with a draw
that depends on no value, and a draw before the first call) and `dynamic` (symbolic sizes).
Twins are calls 0 and 1 with the same operands in one grad mode (in every family but
`dynamic`), drawing nothing unless in `draws`; where a cautious pass must outline them for the
construct to matter (`OUTLINED`), the block writes nothing and holds one tensor per statement.
Model `i` of campaign `seed` holds family `(seed + i) % 7`, so any seed's first seven models
hold every family, and a pass that gets one wrong is blamed within its first models (DIF-29);
the Hypothesis strategy draws the family.

Valid by construction: every op keeps the shape of `h`, a call pairs tensors of one shape, and
in-place updates touch the block's own tensor or, guarded by `if not g.requires_grad`, its
second input (a leaf that requires grad cannot be updated in place). `ModelSpec` renders to a
model file's source (`render`), so a repro is just source. `random_spec(seed, index)` is the seeded
generator, `model_specs()` the Hypothesis strategy; both draw through one `Picker`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from checker.io.model_file import Model, model_from_source
from checker.oracle.campaign.modelspec import Call as Call
from checker.oracle.campaign.modelspec import InputSpec as InputSpec
from checker.oracle.campaign.modelspec import ModelSpec as ModelSpec
from checker.oracle.campaign.modelspec import render as render

T = TypeVar("T")

FIRST = ("t = h * 1.5", "t = f(h)", "t = h + g", "t = h.clone()")
STATEMENTS = (
    "t = f(t)",
    "t = t * s",
    "t = torch.sin(t)",
    "t = torch.tanh(t)",
    "t = t.sigmoid()",
    "t = t.relu() + 2",
    "t = torch.add(t, g, alpha=s)",
    "t = torch.clamp(t, -s, s)",
    "t = torch.div(t * 10, 3, rounding_mode=m)",
    "t.add_(1)",
    "t.mul_(s)",
    "t += g",
    "t = t.transpose(0, 1).contiguous().transpose(0, 1)",
    "t = t.reshape(-1).view(h.shape)",
    "a, b = t.chunk(2, dim=-1)\n    t = torch.cat([b * s, a], dim=-1)",
    "t = t - t.mean(dim=-1, keepdim=True)",
    "t = t * g",
    "t = (t @ g.to(t.dtype).transpose(0, 1)) @ g.to(t.dtype) / 8",
)
ALPHA = STATEMENTS[6]  # `torch.add(t, g, alpha=s)`
RETURNS = ("t", "t + h", "t * g", "(t, t.sum())")
# in-place updates of the block's second input: a graph input or an earlier call's result, so
# their order matters across regions (a leaf that requires grad cannot be updated: guarded)
UPDATES = (
    "", "", "", "",
    "if not g.requires_grad:\n        g.mul_(s)",
    "if not g.requires_grad:\n        g.add_(1)",
)  # fmt: skip
# in-place writes of a view of the block's second input (the `input_view_writes` family), by
# slicing: an earlier result may be laid out transposed, which `view(-1)` refuses
VIEW_UPDATES = (
    "if not g.requires_grad:\n        g[:, 1:].mul_(s)",
    "if not g.requires_grad:\n        g[0].add_(1)",
)
CONSTANTS = ("0.5", "2.0", "3.0")
TARGETS = ("torch.sin", "torch.cos", "torch.tanh")
MODES = ('"floor"', '"trunc"')
CONTEXTS = ("", "", "", "", "torch.no_grad()", 'torch.autocast("cpu", dtype=torch.bfloat16)')
# shape-preserving views of a graph input `x` (the same storage)
VIEWS = ("x.view(x.shape)", "x[:]", "x.transpose(0, 1).transpose(0, 1)", "x.unsqueeze(0)[0]",
         "x.narrow(0, 0, x.shape[0])")  # fmt: skip
# in-place writes of a view's base `x` between calls: directly, through a view, by setitem
WRITES = ("x.add_(1)", "x.view(-1).mul_(0.5)", "x[0] = 0.25", "x.t().add_(x.t())")
VIEW_WRITES = WRITES[1:]  # the writes through a view or by setitem
USES = ("", "[0]", "[1]", "[1]")  # what the model keeps of a pair a block returns
# random draws (EFF-4: each reads and writes the generator, so their order matters), some on
# a view or in place; a block's statements around them hold views, updates and switches
DRAWS = (
    "t = t + torch.rand_like(t)",
    "t = t * torch.randn(h.shape, dtype=h.dtype)",
    "t = torch.nn.functional.dropout(t, 0.5, training=True)",
    "t = t + torch.bernoulli(torch.full_like(t, 0.5))",
    "t = t - torch.rand(h.shape, dtype=h.dtype)",
    "t = torch.normal(t, 0.5)",
    "t.add_(torch.rand_like(t))",
    "t = t + torch.randn(h.shape, dtype=h.dtype).view(-1).view(h.shape)",
)
# a draw between calls, outside every block: on a view of the model's first input
MODEL_DRAWS = (
    "", "", "x0 = x0 + torch.rand_like(x0)", "x0 = torch.nn.functional.dropout(x0, 0.25)",
)  # fmt: skip
# construct families (module docstring): model i of a seed holds family (seed + i) % 7
FAMILIES = ("constants", "written_views", "shared_operands", "several_outputs",
            "input_view_writes", "draws", "dynamic")  # fmt: skip
OUTLINED = FAMILIES[1:4]  # their twins must be outlined: the block neither writes nor draws
TWINS = FAMILIES[:6]  # call 1 repeats call 0 (`_calls`)
# what a cautious pass never outlines: writes, values that are not one tensor (a size, a tuple)
UNOUTLINED = tuple(
    st for st in STATEMENTS if "_(" in st or "+=" in st or "h.shape" in st or "chunk" in st
)
WRITTEN = ("written_views", "input_view_writes")  # they write inputs: none requires grad
SHAPES = ((4, 8), (4, 8), (6, 8))
DTYPES = ("float32", "float32", "float64")


class Picker(Protocol):
    """Chooses one of `options` (a seeded `random.Random`, or a Hypothesis draw)."""

    def __call__(self, options: Sequence[T]) -> T: ...


def build_spec(pick: Picker, seed: int, family: str) -> ModelSpec:
    """A random model holding `family`'s constructs: inputs, block body, calls (DIF-6)."""
    inputs = tuple(
        InputSpec(pick(SHAPES), pick(DTYPES), pick((False, False, True)) and family not in WRITTEN)
        for _ in range(pick((2, 3)))
    )
    body = (pick(FIRST), *(pick(STATEMENTS) for _ in range(pick((1, 2, 3, 4)))))
    returns = RETURNS[-1] if family == "several_outputs" else pick(RETURNS)
    calls = _calls(pick, inputs, returns.startswith("("), family)
    dynamic = pick((False, False, True)) or family == "dynamic"
    update = pick(UPDATES)  # drawn last: the models of earlier releases keep their choices
    if family in OUTLINED or family == "input_view_writes":
        update = pick(VIEW_UPDATES) if family == "input_view_writes" else ""
    if update:
        body = (body[0], update, *body[1:])
    body = _block_of(family, body)
    spec = ModelSpec(inputs, body, returns, calls, dynamic, seed, family=family)
    return _with_draws(pick, _with_aliasing(pick, spec))


def _block_of(family: str, body: tuple[str, ...]) -> tuple[str, ...]:
    """The `constants` family's block adds with `alpha=s` (B1's pattern, an op the block uses
    once), the `shared_operands` family's reads `g`; where the twins must be
    outlined, the block holds only statements a cautious pass outlines."""
    if family in OUTLINED:
        body = tuple(st for st in body if st not in UNOUTLINED)
    if family == "constants" and ALPHA not in body:
        body = (*body, ALPHA)
    if family == "shared_operands" and not any(re.search(r"\bg\b", st) for st in body):
        body = (*body, "t = t * g")  # the second operand is read
    return body


def _with_draws(pick: Picker, spec: ModelSpec) -> ModelSpec:
    """Random draws (drawn after everything else, so that a model drawing nothing keeps its
    other choices): one or two in the block, half of the time (at least one in the `draws`
    family, none in the other families with twins), each at a random place after its first
    statement; then, half of the time (always in the `draws` family), a draw before the first
    call."""
    body = list(spec.body)
    count: int = pick((0, 0, 1, 2))
    if spec.family in TWINS and spec.family != "draws":  # the twins draw nothing
        count = 0
    count = max(count, 1) if spec.family == "draws" else count
    for _ in range(count):
        where: int = pick(range(1, len(body) + 1))
        body.insert(where, pick(DRAWS))
    if spec.family == "draws" and not any("h.shape" in st for st in body):
        body.append(pick([d for d in DRAWS if "h.shape" in d]))  # depends on no value
    draw: str = pick(MODEL_DRAWS) if count else ""
    if spec.family == "draws" and not draw:
        draw = pick([d for d in MODEL_DRAWS if d])
    return replace(spec, body=tuple(body), draw=draw)


def _with_aliasing(pick: Picker, spec: ModelSpec) -> ModelSpec:
    """The aliasing draws (module docstring): each is "none" most of the time, and always
    there in its family (where calls 0 and 1 are twins, both hold it)."""
    family, calls = spec.family, list(spec.calls)
    view, after = _shared_view(pick, spec, calls)
    aliased: bool = pick((False, False, False, True)) and family not in OUTLINED
    aliased = aliased or family == "shared_operands"  # elsewhere a cautious pass outlines
    if aliased:
        k: int = 0 if family == "shared_operands" else pick(range(len(calls)))
        for i in (0, 1) if k < 2 and family in TWINS else (k,):  # both twins
            calls[i] = replace(calls[i], second=f"{calls[i].first}[:]")
    kept: tuple[str, ...] = ()
    parts: bool = pick((False, True, True, True)) or family == "several_outputs"
    if spec.returns.startswith("(") and parts:  # the first call's sum mostly unused
        kept = (pick(("[0]", "[0]", "")), *(pick(USES) for _ in calls[1:]))
        kept = ("[0]", "[1]", *kept[2:]) if family == "several_outputs" else kept
    return replace(spec, calls=tuple(calls), view=view, after=after, kept=kept)


def _shared_view(pick: Picker, spec: ModelSpec, calls: list[Call]) -> tuple[str, tuple[str, ...]]:
    """A view `v` of a graph input that some calls read (updated in `calls`), and the writes
    of its base after each call: `(view, after)`, or nothing. In the `written_views` family,
    calls 0 and 1 read `v` and its base is written through a view after call 1."""
    bases = [i for i, x in enumerate(spec.inputs) if not x.requires_grad]
    shared: bool = pick((False, False, True)) or spec.family == "written_views"
    if not (bases and shared):
        return "", ()
    written = spec.family == "written_views"
    j: int = pick(bases)
    j = int(calls[0].first[1:]) if written else j  # the first call reads a graph input
    kind, base = (spec.inputs[j].shape, spec.inputs[j].dtype), f"x{j}"
    for i, c in enumerate(calls):  # read only through v
        if _kind(spec, c.first) == kind and (pick((True, False)) or (written and i < 2)):
            calls[i] = replace(c, first="v", second="v" if c.second == base else c.second)
    writes = [pick(("", "", *WRITES)) for _ in calls]
    if spec.family in TWINS:  # the twins read one version of one value
        calls[1], writes[0] = replace(calls[0], const=calls[1].const), ""
    if written:  # then it is written through a view
        writes[1] = writes[1] if writes[1] in VIEW_WRITES else pick(VIEW_WRITES)
    view: str = pick(VIEWS)
    return view.replace("x", base), tuple(w.replace("x", base) for w in writes)


def _kind(spec: ModelSpec, operand: str) -> tuple[tuple[int, ...], str] | None:
    """The shape and dtype of a graph input `x<i>` (None for anything else)."""
    if operand.startswith("x") and operand[1:].isdigit():
        x = spec.inputs[int(operand[1:])]
        return x.shape, x.dtype
    return None


def _calls(
    pick: Picker, inputs: Sequence[InputSpec], tuple_result: bool, family: str
) -> tuple[Call, ...]:
    """Calls whose two tensors share a shape and dtype; constants and targets mostly repeat
    the first call's, so that some calls merge and some differ by one thing. In a family with
    twins, call 1 repeats call 0, both outside `no_grad` and `autocast` (in the `constants`
    family every call does, with a float constant of its own, call 1's another than call 0's)."""
    values = [(f"x{i}", (spec.shape, spec.dtype)) for i, spec in enumerate(inputs)]
    calls: list[Call] = []
    for i in range(pick((2, 3, 3, 4))):
        name, kind = pick(values)
        same = [v for v, k in values if k == kind]
        second = name if pick((True, False, False, False)) else pick(same)
        const = _repeat_or_pick(pick, calls[0].const if calls else None, CONSTANTS)
        target = _repeat_or_pick(pick, calls[0].target if calls else None, TARGETS)
        mode = _repeat_or_pick(pick, calls[0].mode if calls else None, MODES)
        call = Call(name, second, const, target, mode, pick(CONTEXTS))
        if family in TWINS and i < 2:
            call = replace(calls[0] if i else call, context="")
            kind = values[int(call.first[1:])][1]  # call 0 reads graph inputs only
        if family == "constants" and i:  # each call: call 0 with a constant of its own
            const = pick([c for c in CONSTANTS if c != calls[0].const]) if i == 1 else const
            call, kind = replace(calls[0], const=const), values[len(inputs)][1]
        calls.append(call)
        values.append((f"h{i}[0]" if tuple_result else f"h{i}", kind))
    return tuple(calls)


def _repeat_or_pick(pick: Picker, first: str | None, options: Sequence[str]) -> str:
    """The first call's choice half of the time (calls that merge), else a fresh one."""
    repeat: bool = pick((True, False))
    return first if first is not None and repeat else pick(options)


def random_spec(seed: int, index: int = 0) -> ModelSpec:
    """The `index`-th model of the campaign with `seed`: same arguments, same model."""
    rng = random.Random(f"fxoracle-{seed}-{index}")

    def pick(options: Sequence[Any]) -> Any:
        return options[rng.randrange(len(options))]

    return build_spec(pick, seed * 1000 + index, FAMILIES[(seed + index) % len(FAMILIES)])


def random_source(seed: int, index: int = 0) -> str:
    """`render(random_spec(seed, index))`."""
    return render(random_spec(seed, index))


def model_specs() -> Any:
    """A Hypothesis strategy of `ModelSpec`s (Hypothesis is a dev dependency, imported here)."""
    from hypothesis import strategies as st

    @st.composite
    def specs(draw: Callable[[Any], Any]) -> ModelSpec:
        def pick(options: Sequence[Any]) -> Any:
            return draw(st.sampled_from(options))

        return build_spec(pick, draw(st.integers(0, 9999)), draw(st.sampled_from(FAMILIES)))

    return specs()


def random_model(seed: int, index: int = 0) -> Model:
    """The `index`-th model of the campaign with `seed`, in memory (named `random_<seed>_<i>`)."""
    return model_from_source(f"random_{seed}_{index}", random_source(seed, index))
