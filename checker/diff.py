"""The differential oracle: fxoracle's reference against another implementation, component by
component, graph by graph (spec chapter 08, DIF).

`run_diff(paths, against, component, random, seed, repro_dir)` captures each model file (and
`random` generated ones), runs both sides on the same input, compares canonical forms
(`checker.canon`) and, for every divergence, decides which side is wrong: each side's output is
run against the original and given to `checker.check.check_transformation`. Components:

  tracker  region groups by node names; a group is wrong if it overlaps or pairs unequal nodes
  dedup    the graph after the pass; judged by execution and the checker
  sort     three scrambles of the captured graph with its ordering deps; an order is wrong if a
           node precedes a dependency or the output is not last
  split    fixed partition policies x both orders; judged like dedup; both refusing agrees

Where both outputs are correct but differ, torch 2.13 is the specification (chapter 00,
"Ground truth"), so against torch the reference is wrong; against another implementation it is
unknown. Nothing raised inside a side stops the diff: it becomes a `crash` divergence. This
module touches torch objects, so `Any` appears where they cross its edge.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import torch
import torch.fx

from checker.canon import (
    bucket_faults,
    canonical_graph,
    first_difference,
    only_order_differs,
    order_faults,
    region_faults,
)
from checker.impls import (
    HOSTILE_SPLIT_CASES,
    SCRAMBLES,
    SPLIT_CASES,
    Deduplicates,
    FindsRegions,
    SplitCase,
    Splits,
    label_of,
    load_impl,
    parts_of,
    sort_input,
    split_with,
)
from reference.errors import FxOracleError

COMPONENTS = ("tracker", "dedup", "sort", "split")


@dataclass(frozen=True, slots=True)
class Divergence:
    """One difference between the sides, and which side is wrong (DIF-3, DIF-4)."""

    component: str
    kind: str  # regions | graph | order | crash | refusal | oracle-error
    wrong: str  # "reference", the other side's label, or "unknown"
    detail: str
    case: str = ""  # the split case or sort scramble, "" for model-level components

    def to_json(self) -> dict[str, str]:
        detail = f"[{self.case}] {self.detail}" if self.case else self.detail
        return {"component": self.component, "kind": self.kind, "wrong": self.wrong,
                "detail": detail}  # fmt: skip


@dataclass(frozen=True, slots=True)
class GraphDiff:
    """The diff of one model: its divergences and, if one was shrunk, the repro's path."""

    graph: str
    divergences: tuple[Divergence, ...]
    repro: str | None = None
    source: str | None = field(default=None, compare=False)  # generated models only

    @property
    def agree(self) -> bool:
        return not self.divergences

    def to_json(self) -> dict[str, object]:
        return {"graph": self.graph, "agree": self.agree, "repro": self.repro,
                "divergences": [d.to_json() for d in self.divergences]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DiffReport:
    """Every graph's diff; `to_json` is one graph's object, or a list plus a summary."""

    against: str
    component: str
    graphs: tuple[GraphDiff, ...]

    @property
    def agree(self) -> bool:
        return all(g.agree for g in self.graphs)

    def to_json(self) -> dict[str, object]:
        if len(self.graphs) == 1:
            return {"against": self.against, **self.graphs[0].to_json()}
        graphs = [g.to_json() for g in self.graphs]
        return {"against": self.against, "agree": self.agree, "graphs": graphs,
                "summary": summary(self.graphs)}  # fmt: skip


def summary(graphs: Sequence[GraphDiff]) -> dict[str, object]:
    """Counts: graphs, agreeing graphs, divergences by wrong side and by component."""
    found = [d for g in graphs for d in g.divergences]
    return {"graphs": len(graphs), "agree": sum(g.agree for g in graphs),
            "by_wrong": dict(sorted(Counter(d.wrong for d in found).items())),
            "by_component": dict(sorted(Counter(d.component for d in found).items()))}  # fmt: skip


def render_text(report: DiffReport) -> str:
    """One line per graph, one indented line per divergence, then the verdict."""
    lines = [f"fxoracle diff: reference against {report.against} ({report.component})"]
    for g in report.graphs:
        lines.append(f"  {g.graph}: {'agree' if g.agree else 'DIVERGE'}")
        for d in g.divergences:
            where = f" [{d.case}]" if d.case else ""
            lines.append(f"    {d.component} {d.kind}{where}: wrong={d.wrong}: {d.detail}")
        if g.repro:
            lines.append(f"    repro: {g.repro}")
    lines.append(f"  agree: {str(report.agree).lower()}")
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class Sides:
    """The reference, the implementation under test (`spec` as given to `--against`, `label`
    as reports name it), the components to run and the split cases."""

    reference: Any
    other: Any
    spec: str
    label: str
    components: tuple[str, ...]
    split_cases: tuple[SplitCase, ...] = SPLIT_CASES


def make_sides(against: str, component: str = "all", hostile: bool = False) -> Sides:
    """Load `against` and choose the components both sides implement (DIF-1)."""
    from checker.impls import ReferenceImpl

    if component != "all" and component not in COMPONENTS:
        raise FxOracleError(f"unknown component {component!r}: {', '.join(COMPONENTS)} or all")
    other = load_impl(against)
    wanted = COMPONENTS if component == "all" else (component,)
    chosen = tuple(c for c in wanted if c in parts_of(other))
    if not chosen:
        raise FxOracleError(f"--against {against} implements no part of component {component}")
    cases = SPLIT_CASES + (HOSTILE_SPLIT_CASES if hostile else ())
    return Sides(ReferenceImpl(), other, against, label_of(other, against), chosen, cases)


def run_diff(
    paths: Sequence[Path],
    against: str,
    component: str = "all",
    random: int = 0,
    seed: int = 0,
    repro_dir: Path | None = None,
) -> DiffReport:
    """Diff every model file of `paths` and `random` generated models (DIF-1..DIF-10)."""
    from checker.randmodels import random_source

    if not paths and random <= 0:
        raise FxOracleError("nothing to compare: give model files or --random N")
    sides = make_sides(against, component)
    graphs = [diff_file(Path(p), sides, repro_dir) for p in paths]
    with tempfile.TemporaryDirectory(prefix="fxoracle-random-") as tmp:
        for i in range(random):
            name = f"random_{seed}_{i}"
            source = random_source(seed, i)
            path = Path(tmp) / f"{name}.py"
            path.write_text(source)
            graphs.append(diff_file(path, sides, repro_dir, name=name, source=source))
    return DiffReport(label_of(sides.other, against), component, tuple(graphs))


def diff_file(
    path: Path, sides: Sides, repro_dir: Path | None = None, *, name: str = "",
    source: str | None = None,
) -> GraphDiff:  # fmt: skip
    """All chosen components on one model file, then a repro of the first blamed divergence."""
    if not path.is_file():
        raise FxOracleError(f"{path}: no such file")
    found = diff_components(path, sides)
    repro = None
    if repro_dir is not None and found:
        from checker.shrink import write_repro

        repro = write_repro(path, found, sides, repro_dir)
    return GraphDiff(name or path.name, found, None if repro is None else str(repro), source)


def diff_components(path: Path, sides: Sides) -> tuple[Divergence, ...]:
    """The divergences of every chosen component on `path` (a side's crash included)."""
    for side in (sides.reference, sides.other):
        forget = getattr(side, "forget", None)
        if callable(forget):
            forget()  # a file may be rewritten between calls (shrinking)
    ours = attempt(lambda: _base(path, sides))
    if isinstance(ours, Exception):
        return (_reference_failed(path, sides, ours),)
    found: list[Divergence] = []
    for component in sides.components:
        try:
            found += COMPARE[component](path, sides)
        except Exception as e:  # a bug of the oracle itself: reported, never a crash
            where = traceback.extract_tb(e.__traceback__)[-1]
            at = f" at {Path(where.filename).name}:{where.lineno}"
            found.append(Divergence(component, "oracle-error", "unknown", _line(e) + at))
    return tuple(found)


def _reference_failed(path: Path, sides: Sides, error: Exception) -> Divergence:
    """The reference could not capture or deduplicate `path`: bad input if torch cannot
    capture it either (or the file does not load), else a crash of the reference."""
    text = _line(error)
    loading = isinstance(error, FxOracleError) and str(error).startswith(f"{path}:")
    if loading:
        raise error
    from checker.impls import TorchImpl

    if isinstance(attempt(lambda: TorchImpl().find_regions(path)), Exception):
        raise FxOracleError(f"{path}: neither side can capture it: {text}") from error
    component = "dedup" if "dedup" in sides.components else sides.components[0]
    return Divergence(component, "crash", "reference", f"reference raised {text}")


Outcome = Any  # a side's result, or the exception it raised


def attempt(run: Callable[[], Any]) -> Outcome:
    """`run()`, or the exception it raised (a side never stops the diff)."""
    try:
        return run()
    except Exception as e:
        return e


@dataclass(frozen=True, slots=True)
class Judgement:
    """One side's output: `right` (runs like the original and every check holds), `wrong`
    (a different result, a crash, a fault, or a violated check) or `unknown`, with the
    reason. `concrete` marks a wrong verdict shown by a run or a structural fact, as opposed
    to a checker violation alone (DIF-4)."""

    verdict: Literal["right", "wrong", "unknown"]
    reason: str
    concrete: bool = True

    @property
    def wrong(self) -> bool:
        return self.verdict == "wrong"

    @property
    def right(self) -> bool:
        return self.verdict == "right"

    @staticmethod
    def of_fault(fault: str) -> Judgement:
        """Wrong with `fault`, or right when there is none."""
        return Judgement("wrong", fault) if fault else Judgement("right", "")


def judge_transformation(
    original: torch.fx.GraphModule,
    transformed: Any,
    inputs: tuple[Any, ...],
    extra_deps: Mapping[torch.fx.Node, Sequence[torch.fx.Node]] | None,
    grad_probes: bool = False,
) -> Judgement:
    """Execution against the original, then `check_transformation` (DIF-4). `grad_probes`
    adds the runs of `probes`; not for Dynamo-level passes, whose graphs are specialized to
    the inputs' requires_grad and the caller's grad mode (invoke_subgraph reads them from its
    body's metadata)."""
    if isinstance(transformed, Exception):
        return Judgement("wrong", f"raised {_line(transformed)}")
    runs = probes(original, inputs) if grad_probes else [("example inputs", inputs, True)]
    for label, probe, caller_grad in runs:
        ran = compare_runs(original, transformed, probe, caller_grad)
        # a probe the original cannot run (an in-place update of a leaf that requires grad)
        # is skipped; on the example inputs it makes the verdict unknown
        if ran is not None and (ran.wrong or probe is inputs):
            return Judgement(ran.verdict, f"{label}: {ran.reason}")
    try:
        from checker.check import check_transformation
    except ImportError:  # the checker is optional: execution alone decides
        return Judgement("right", "")
    report = check_transformation(original, transformed, inputs, extra_deps=extra_deps)
    if report.violations:
        first = report.violations[0]
        return Judgement("wrong", f"{first.id} {first.name}: {_witness(first.verdict)}", False)
    if report.unknowns:
        return Judgement("unknown", f"{report.unknowns[0].id} unknown")
    return Judgement("right", "")


def _witness(verdict: object) -> str:
    text = str(getattr(verdict, "witness", verdict)).strip().splitlines()
    return text[0][:200] if text else ""


def probes(
    original: torch.fx.GraphModule, inputs: tuple[Any, ...]
) -> list[tuple[str, tuple[Any, ...], bool]]:
    """The runs that judge an output: the example inputs; with a grad-mode switch in the graph
    also floating inputs that require grad, called with grad on and with grad off (DIF-4)."""
    runs = [("example inputs", inputs, True)]
    if any(n.target is torch._C._set_grad_enabled for n in original.graph.nodes):
        grads = tuple(
            t.detach().clone().requires_grad_(True)
            if isinstance(t, torch.Tensor) and t.is_floating_point() and not t.is_meta else t
            for t in inputs
        )  # fmt: skip
        runs += [("inputs requiring grad", grads, True), ("called under no_grad", grads, False)]
    return runs


def compare_runs(
    original: torch.fx.GraphModule,
    transformed: torch.fx.GraphModule,
    inputs: tuple[Any, ...],
    caller_grad: bool = True,
) -> Judgement | None:
    """None when both modules give close outputs, inputs after the call, `requires_grad`
    flags and grad mode on the same inputs; else why not (unknown if the original fails)."""
    expected = attempt(lambda: run_module(original, inputs, caller_grad))
    if isinstance(expected, Exception):
        return Judgement("unknown", f"the original does not run: {type(expected).__name__}")
    got = attempt(lambda: run_module(transformed, inputs, caller_grad))
    if isinstance(got, Exception):
        return Judgement("wrong", f"raised {_line(got)}")
    mismatch = attempt(lambda: torch.testing.assert_close(got[:2], expected[:2], equal_nan=True))
    if isinstance(mismatch, Exception):
        lines = [ln.strip() for ln in str(mismatch).splitlines() if ln.strip()]
        return Judgement("wrong", "numbers differ: " + "; ".join(lines[:3])[:240])
    for what, i in (("requires_grad", 2), ("grad mode after the call", 3)):
        if got[i] != expected[i]:
            return Judgement("wrong", f"{what} {got[i]} instead of {expected[i]}")
    return None


def run_module(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], caller_grad: bool = True
) -> tuple[Any, ...]:
    """(output leaves, inputs after the call, outputs' requires_grad, grad mode after)."""
    from torch.utils._pytree import tree_leaves

    from reference.capture import fresh_inputs

    args = fresh_inputs(inputs)
    mode = torch.is_grad_enabled()
    torch.manual_seed(0)
    try:
        torch.set_grad_enabled(caller_grad)
        with contextlib.redirect_stderr(io.StringIO()):  # fx prints the code of a failing call
            leaves = tree_leaves(gm(*args))
        after = torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(mode)
    grads = [t.requires_grad for t in leaves if isinstance(t, torch.Tensor)]
    return leaves, list(args), grads, after


def blame(ours: Judgement, theirs: Judgement, sides: Sides, difference: str) -> tuple[str, str]:
    """(wrong side, detail) from both sides' judgements (DIF-4)."""
    if ours.wrong and not theirs.wrong:
        return "reference", f"{difference}; reference: {ours.reason}"
    if theirs.wrong and not ours.wrong:
        return sides.label, f"{difference}; {sides.label}: {theirs.reason}"
    if ours.wrong and ours.concrete != theirs.concrete:  # a run outweighs a checker verdict
        side, j = ("reference", ours) if ours.concrete else (sides.label, theirs)
        other = theirs if ours.concrete else ours
        return side, f"{difference}; {side}: {j.reason} (other side: {other.reason})"
    if ours.wrong:
        return "unknown", f"{difference}; both wrong: {ours.reason} / {theirs.reason}"
    reasons = "; ".join(r for r in (ours.reason, theirs.reason) if r)
    return "unknown", f"{difference}; {reasons or 'both correct'}"


def _base(path: Path, sides: Sides) -> Any:
    """The reference's capture of `path`: the graph the graph-level components work on."""
    return sides.reference.deduplicate(path)


def compare_tracker(path: Path, sides: Sides) -> list[Divergence]:
    """Region groups by node names; faults decide who is wrong (DIF-4)."""
    ours = sides.reference.find_regions(path)
    assert isinstance(sides.other, FindsRegions), "DIF-1: the part is implemented"
    theirs = attempt(lambda: sides.other.find_regions(path))
    if isinstance(theirs, Exception):
        return [_crashed("tracker", sides.label, theirs)]
    if ours == theirs:
        return []
    base = _base(path, sides)
    faults = region_faults(base.original, ours), region_faults(base.original, theirs)
    judged = [Judgement.of_fault(f[0] if f else "") for f in faults]
    sizes = f"reference {_shape(ours)}, {sides.label} {_shape(theirs)}"
    if judged[0].right and judged[1].right:  # both valid: is the difference torch's key's?
        merged = bucket_faults(base.original, _their_buckets(path, sides))
        if merged:
            return [Divergence("tracker", "regions", "unknown",
                               f"{sizes}; both valid, {sides.label}'s key merges unequal "
                               f"nodes (TRK-5): {merged[0]}")]  # fmt: skip
    wrong, detail = blame(judged[0], judged[1], sides, sizes)
    return [Divergence("tracker", "regions", wrong, detail)]


def _their_buckets(path: Path, sides: Sides) -> tuple[tuple[str, ...], ...]:
    if not isinstance(sides.other, Deduplicates):
        return ()
    found = attempt(lambda: sides.other.deduplicate(path))
    return () if isinstance(found, Exception) else tuple(found.buckets)


def _shape(groups: Sequence[Sequence[Sequence[str]]]) -> str:
    return "[" + ", ".join(f"{len(g)}x{len(g[0])}" for g in groups if g) + "]"


def _crashed(component: str, label: str, e: BaseException, case: str = "") -> Divergence:
    return Divergence(component, "crash", label, f"{label} raised {_line(e)}", case)


def _line(e: BaseException) -> str:
    """`Type: first line of the message`."""
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return text[0] if text else type(e).__name__


def compare_dedup(path: Path, sides: Sides) -> list[Divergence]:
    """The graph right after each side's pass, canonically; judged when they differ."""
    ours = _base(path, sides)
    assert isinstance(sides.other, Deduplicates), "DIF-1: the part is implemented"
    theirs = attempt(lambda: sides.other.deduplicate(path))
    if isinstance(theirs, Exception):
        return [_crashed("dedup", sides.label, theirs)]
    a, b = canonical_graph(ours.transformed), canonical_graph(theirs.transformed)
    if a == b:
        return []
    kind = "order" if only_order_differs(a, b) else "graph"
    difference = first_difference(a, b, ("reference", sides.label))
    judged = [
        judge_transformation(o.original, o.transformed, o.inputs, o.extra_deps)
        for o in (ours, theirs)
    ]
    if judged[0].right and judged[1].right and ours.groups != theirs.groups:
        reason = "both correct; they outlined different region groups (see tracker)"
        return [Divergence("dedup", kind, "unknown", f"{difference}; {reason}")]
    wrong, detail = blame(judged[0], judged[1], sides, difference)
    return [Divergence("dedup", kind, wrong, detail)]


def compare_sort(path: Path, sides: Sides) -> list[Divergence]:
    """Each scramble of the captured graph sorted by both sides with the same deps (DIF-5)."""
    base = _base(path, sides).original
    return [d for scramble in SCRAMBLES for d in sort_case(base, sides, scramble)]


def sort_case(base: torch.fx.GraphModule, sides: Sides, scramble: str) -> list[Divergence]:
    """Both sides sort their own scrambled copy of `base`; orders compared by node names."""
    results = []
    for side in (sides.reference, sides.other):
        gm, deps = sort_input(base, scramble)
        ran = attempt(partial(side.stable_sort, gm.graph, deps))
        results.append(ran if isinstance(ran, Exception) else (gm, deps))
    return _sort_divergence(results, sides, scramble)


def _sort_divergence(results: list[Any], sides: Sides, scramble: str) -> list[Divergence]:
    names = [[n.name for n in r[0].graph.nodes] if isinstance(r, tuple) else None for r in results]
    if names[0] is not None and names[0] == names[1]:
        return []
    verdicts = []
    for r in results:
        fault = f"raised {_line(r)}" if isinstance(r, Exception) else order_faults(*r)
        verdicts.append(Judgement.of_fault(fault))
    if all(isinstance(r, Exception) for r in results):
        return []
    kind = "crash" if any(isinstance(r, Exception) for r in results) else "order"
    wrong, detail = blame(verdicts[0], verdicts[1], sides, "orders differ")
    return [Divergence("sort", kind, wrong, detail, scramble)]


def compare_split(path: Path, sides: Sides) -> list[Divergence]:
    """Every split case on the captured graph; both refusing (raising) agrees (DIF-5)."""
    base = _base(path, sides)
    assert isinstance(sides.other, Splits), "DIF-1: the part is implemented"
    return [d for c in sides.split_cases for d in split_case(base.original, base.inputs, sides, c)]


def split_case(
    gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides, case: SplitCase
) -> list[Divergence]:
    """Both sides split `gm` under `case`; judged against `gm` on `inputs` if they differ."""
    outs = [attempt(partial(split_with, side, gm, case)) for side in (sides.reference, sides.other)]
    if any(isinstance(o, NotImplementedError) for o in outs):
        return []  # outside what the implementation supports
    return _split_divergence(outs, gm, inputs, sides, case)


def _split_divergence(
    outs: list[Any], gm: torch.fx.GraphModule, inputs: tuple[Any, ...], sides: Sides,
    case: SplitCase,
) -> list[Divergence]:  # fmt: skip
    ours, theirs = outs
    if isinstance(ours, Exception) and not isinstance(ours, FxOracleError):
        return [_crashed("split", "reference", ours, str(case))]
    if isinstance(ours, Exception) and isinstance(theirs, Exception):
        return []  # both refuse
    if not isinstance(ours, Exception) and not isinstance(theirs, Exception):
        a, b = canonical_graph(ours), canonical_graph(theirs)
        if a == b:
            return []
        difference = first_difference(a, b, ("reference", sides.label))
        kind = "order" if only_order_differs(a, b) else "graph"
    else:
        refused = "reference" if isinstance(ours, Exception) else sides.label
        error = ours if isinstance(ours, Exception) else theirs
        difference = f"{refused} raised {_line(error)}"
        kind = "refusal" if refused == "reference" else "crash"
    judged = [judge_transformation(gm, o, inputs, None, grad_probes=True) for o in outs]
    wrong, detail = blame(judged[0], judged[1], sides, difference)
    return [Divergence("split", kind, wrong, detail, str(case))]


COMPARE: Mapping[str, Callable[[Path, Sides], list[Divergence]]] = {
    "tracker": compare_tracker, "dedup": compare_dedup, "sort": compare_sort,
    "split": compare_split,
}  # fmt: skip
