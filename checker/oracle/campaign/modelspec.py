"""What a random model is made of (`ModelSpec`) and the model file it renders to (spec chapter
08, DIF-6); `checker.oracle.campaign.randmodels` draws them."""

from __future__ import annotations

from dataclasses import dataclass


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
    `kept[i]` is what the model returns of call `i` (`""`: all of it); `family` is the
    construct family the model was drawn to hold (`randmodels.FAMILIES`)."""

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
    family: str = ""


def render(spec: ModelSpec) -> str:
    """The model file's source: `block`, `model`, `example_inputs`, `dynamic`."""
    params = ", ".join(f"x{i}" for i in range(len(spec.inputs)))
    family = f", family: {spec.family}" if spec.family else ""
    lines = [f'"""A generated model (fxoracle randmodels{family})."""', "", "import torch", "", ""]
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
