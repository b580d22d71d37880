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
keeps every earlier choice: half of the models get one or two draws in the block (`DRAWS`:
`rand`, `rand_like`, `randn`, `dropout` in train mode, `bernoulli`, `normal`, one in place, one
through a view), among its views, in-place updates and the calls' `no_grad` and `autocast`
blocks, and half of those a draw before the first call (`MODEL_DRAWS`).

Valid by construction: every op keeps the shape of `h`, a call pairs tensors of one shape, and
in-place updates touch the block's own tensor or, guarded by `if not g.requires_grad`, its
second input (a leaf that requires grad cannot be updated in place). `ModelSpec` renders to a
model file's source (`render`), so a repro is just source. `random_spec(seed, index)` is the seeded
generator, `model_specs()` the Hypothesis strategy; both draw through one `Picker`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from checker.io.model_file import Model, model_from_source

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
RETURNS = ("t", "t + h", "t * g", "(t, t.sum())")
# in-place updates of the block's second input: a graph input or an earlier call's result, so
# their order matters across regions (a leaf that requires grad cannot be updated: guarded)
UPDATES = (
    "", "", "", "",
    "if not g.requires_grad:\n        g.mul_(s)",
    "if not g.requires_grad:\n        g.add_(1)",
)  # fmt: skip
CONSTANTS = ("0.5", "2.0", "3.0")
TARGETS = ("torch.sin", "torch.cos", "torch.tanh")
MODES = ('"floor"', '"trunc"')
CONTEXTS = ("", "", "", "", "torch.no_grad()", 'torch.autocast("cpu", dtype=torch.bfloat16)')
# shape-preserving views of a graph input `x` (the same storage)
VIEWS = ("x.view(x.shape)", "x[:]", "x.transpose(0, 1).transpose(0, 1)", "x.unsqueeze(0)[0]",
         "x.narrow(0, 0, x.shape[0])")  # fmt: skip
# in-place writes of a view's base `x` between calls: directly, through a view, by setitem
WRITES = ("x.add_(1)", "x.view(-1).mul_(0.5)", "x[0] = 0.25", "x.t().add_(x.t())")
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
SHAPES = ((4, 8), (4, 8), (6, 8))
DTYPES = ("float32", "float32", "float64")


class Picker(Protocol):
    """Chooses one of `options` (a seeded `random.Random`, or a Hypothesis draw)."""

    def __call__(self, options: Sequence[T]) -> T: ...


@dataclass(frozen=True, slots=True)
class InputSpec:
    shape: tuple[int, ...]
    dtype: str
    requires_grad: bool


@dataclass(frozen=True, slots=True)
class Call:
    """`h<i> = block(first, second, const, target, mode)`, inside `context` if any."""

    first: str
    second: str
    const: str
    target: str
    mode: str
    context: str


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Everything a generated model file is made of. `view` defines `v` (a view of a graph
    input) first; `after[i]` runs after call `i` (a write of `v`'s base, or nothing);
    `kept[i]` is what the model returns of call `i` (`""`: all of it)."""

    inputs: tuple[InputSpec, ...]
    body: tuple[str, ...]
    returns: str
    calls: tuple[Call, ...]
    dynamic: bool
    seed: int
    view: str = ""
    after: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    draw: str = ""  # a draw before the first call (`MODEL_DRAWS`), or nothing


def build_spec(pick: Picker, seed: int) -> ModelSpec:
    """A random model: inputs, block body, calls (DIF-6)."""
    inputs = tuple(
        InputSpec(pick(SHAPES), pick(DTYPES), pick((False, False, True)))
        for _ in range(pick((2, 3)))
    )
    body = (pick(FIRST), *(pick(STATEMENTS) for _ in range(pick((1, 2, 3, 4)))))
    returns = pick(RETURNS)
    calls = _calls(pick, inputs, tuple_result=returns.startswith("("))
    dynamic = pick((False, False, True))
    update = pick(UPDATES)  # drawn last: the models of earlier releases keep their choices
    if update:
        body = (body[0], update, *body[1:])
    spec = ModelSpec(inputs, body, returns, calls, dynamic, seed)
    return _with_draws(pick, _with_aliasing(pick, spec))


def _with_draws(pick: Picker, spec: ModelSpec) -> ModelSpec:
    """Random draws (drawn after everything else, so the models of earlier releases keep their
    choices where they draw nothing): one or two in the block, half of the time, each at a
    random place after its first statement; then, half of the time, a draw before the first
    call."""
    body = list(spec.body)
    count: int = pick((0, 0, 1, 2))
    for _ in range(count):
        where: int = pick(range(1, len(body) + 1))
        body.insert(where, pick(DRAWS))
    return replace(spec, body=tuple(body), draw=pick(MODEL_DRAWS) if count else "")


def _with_aliasing(pick: Picker, spec: ModelSpec) -> ModelSpec:
    """The aliasing draws (module docstring): each is "none" most of the time."""
    view, after, calls = "", tuple[str, ...](), list(spec.calls)
    bases = [i for i, x in enumerate(spec.inputs) if not x.requires_grad]
    shared: bool = pick((False, False, True))
    if bases and shared:
        j: int = pick(bases)
        view = pick(VIEWS).replace("x", f"x{j}")
        kind = (spec.inputs[j].shape, spec.inputs[j].dtype)
        base = f"x{j}"
        for i, c in enumerate(calls):
            if _kind(spec, c.first) == kind and pick((True, False)):  # read only through v
                second = "v" if c.second == base else c.second
                calls[i] = replace(c, first="v", second=second)
        after = tuple(pick(("", "", *WRITES)).replace("x", f"x{j}") for _ in calls)
    aliased: bool = pick((False, False, False, True))
    if aliased:
        k: int = pick(range(len(calls)))
        calls[k] = replace(calls[k], second=f"{calls[k].first}[:]")
    kept: tuple[str, ...] = ()
    parts: bool = pick((False, True, True, True))
    if spec.returns.startswith("(") and parts:  # the first call's sum mostly unused
        kept = (pick(("[0]", "[0]", "")), *(pick(USES) for _ in calls[1:]))
    return replace(spec, calls=tuple(calls), view=view, after=after, kept=kept)


def _kind(spec: ModelSpec, operand: str) -> tuple[tuple[int, ...], str] | None:
    """The shape and dtype of a graph input `x<i>` (None for anything else)."""
    if operand.startswith("x") and operand[1:].isdigit():
        x = spec.inputs[int(operand[1:])]
        return x.shape, x.dtype
    return None


def _calls(pick: Picker, inputs: Sequence[InputSpec], tuple_result: bool) -> tuple[Call, ...]:
    """Calls whose two tensors share a shape and dtype; constants and targets mostly repeat
    the first call's, so that some calls merge and some differ by one thing."""
    values = [(f"x{i}", (spec.shape, spec.dtype)) for i, spec in enumerate(inputs)]
    calls: list[Call] = []
    for i in range(pick((2, 3, 3, 4))):
        name, kind = pick(values)
        same = [v for v, k in values if k == kind]
        second = name if pick((True, False, False, False)) else pick(same)
        const = _repeat_or_pick(pick, calls[0].const if calls else None, CONSTANTS)
        target = _repeat_or_pick(pick, calls[0].target if calls else None, TARGETS)
        mode = _repeat_or_pick(pick, calls[0].mode if calls else None, MODES)
        calls.append(Call(name, second, const, target, mode, pick(CONTEXTS)))
        values.append((f"h{i}[0]" if tuple_result else f"h{i}", kind))
    return tuple(calls)


def _repeat_or_pick(pick: Picker, first: str | None, options: Sequence[str]) -> str:
    """The first call's choice half of the time (calls that merge), else a fresh one."""
    repeat: bool = pick((True, False))
    return first if first is not None and repeat else pick(options)


def render(spec: ModelSpec) -> str:
    """The model file's source: `block`, `model`, `example_inputs`, `dynamic`."""
    params = ", ".join(f"x{i}" for i in range(len(spec.inputs)))
    lines = ['"""A generated model (fxoracle randmodels)."""', "", "import torch", "", ""]
    lines += ["def block(h, g, s, f, m):", *(f"    {st}" for st in spec.body)]
    lines += [f"    return {spec.returns}", "", "", f"def model({params}):"]
    lines += [f"    {spec.draw}"] if spec.draw else []
    lines += [f"    v = {spec.view}"] if spec.view else []
    for i, c in enumerate(spec.calls):
        call = f"h{i} = block({c.first}, {c.second}, {c.const}, {c.target}, {c.mode})"
        lines += [f"    with {c.context}:", f"        {call}"] if c.context else [f"    {call}"]
        lines += [f"    {spec.after[i]}"] if spec.after and spec.after[i] else []
    kept = spec.kept or ("",) * len(spec.calls)
    results = ", ".join(f"h{i}{k}" for i, k in enumerate(kept))
    lines += [
        f"    return ({results},)",
        "",
        "",
        f"_g = torch.Generator().manual_seed({spec.seed})",
    ]
    lines += ["example_inputs = ("] + [f"    {_tensor(x)}," for x in spec.inputs] + [")"]
    lines.append(f"dynamic = {spec.dynamic}")
    return "\n".join(lines) + "\n"


def _tensor(spec: InputSpec) -> str:
    dims = ", ".join(str(d) for d in spec.shape)
    made = f"torch.randn({dims}, generator=_g, dtype=torch.{spec.dtype})"
    return made + (".requires_grad_()" if spec.requires_grad else "")


def random_spec(seed: int, index: int = 0) -> ModelSpec:
    """The `index`-th model of the campaign with `seed`: same arguments, same model."""
    rng = random.Random(f"fxoracle-{seed}-{index}")

    def pick(options: Sequence[Any]) -> Any:
        return options[rng.randrange(len(options))]

    return build_spec(pick, seed * 1000 + index)


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

        return build_spec(pick, draw(st.integers(0, 9999)))

    return specs()


def random_model(seed: int, index: int = 0) -> Model:
    """The `index`-th model of the campaign with `seed`, in memory (named `random_<seed>_<i>`)."""
    return model_from_source(f"random_{seed}_{index}", random_source(seed, index))
