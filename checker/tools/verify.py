"""`fxoracle verify`: what deduplicates, what is refused and why, and the proofs (README,
"Report schema").

The report is a frozen value: `to_json` gives the stable JSON form (sorted keys; timings only in
keys ending `_s`), `render_text` the human form. Exit status: 0 when every check holds, 1 when one
does not (violated or unknown), 2 on bad input (raised as `FxOracleError`).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from checker.io.device import device_of, graph_on_device, on_device
from checker.io.loaders import Note, load_any
from checker.io.model_file import Model
from checker.io.out_paths import marked
from checker.io.reports import plural
from checker.io.supervise import doing
from checker.io.user_code import shown_name, time_limit
from checker.proof.report import (
    ACYCLIC,
    DATAFLOW,
    NUMBERS,
    ORDERING,
    RUNTIME,
    SHAPES,
    WELL_FORMED,
    Report,
)
from checker.proof.verdict import Holds, Verdict, verdict_name
from checker.tools.checked_pipeline import PipelineResult, Split, run_pipeline
from checker.tools.outcomes import region_fates, region_outcomes
from reference.dynamo.capture import Capture, capture
from reference.fx_helpers import NodeIndex
from reference.names import INVOKE
from reference.replace.outliner import Refused, Replaced
from reference.torch_version import TORCH


@dataclass(frozen=True, slots=True, eq=False)
class VerifyReport:
    """What `fxoracle verify` found for one model."""

    model: str
    nodes: int
    result: PipelineResult
    invoke_calls: int
    capture_s: float
    device: str = "cpu"  # where the example inputs lived when captured (FIL-8)

    @property
    def ok(self) -> bool:
        split_ok = self.result.split is None or self.result.split.check.ok
        return self.result.check.ok and split_ok

    def to_json(self) -> dict[str, object]:
        r = self.result
        found: dict[str, object] = marked(
            "verify",
            {
                "model": self.model,
                "torch": TORCH.version,
                "device": self.device,
                "nodes": self.nodes,
                "region_groups": [[r.search.names(reg) for reg in g] for g in kept_regions(r)],
                "subgraphs": {
                    name: len(sub.graph.nodes) for name, sub in r.dedup.subgraphs.items()
                },
                "invoke_calls": self.invoke_calls,
                "replaced": [_replaced_json(x) for x in r.dedup.replaced],
                "refused": [_refused_json(x) for x in r.dedup.refused],
                "region_outcomes": [
                    [o.to_json() for o in region_fates(r.dedup, i, len(g))]
                    for i, g in enumerate(kept_regions(r))
                ],
                "checks": checks_json(r.check),
                "obligations": r.check.to_json()["obligations"],
                "ok": self.ok,
                "timings": {"capture_s": round(self.capture_s, 3)}
                | {k: round(v, 3) for k, v in r.timings.items()},
            },
        )
        if r.split is not None:
            found["split"] = {
                "policy": str(r.split.policy),
                "partitions": list(r.split.partitions),
                "checks": checks_json(r.split.check),
                "obligations": r.split.check.to_json()["obligations"],
            }
        return found


def kept_regions(r: PipelineResult) -> list[tuple[tuple[NodeIndex, ...], ...]]:
    return r.search.expansion.kept_regions()


def _replaced_json(x: Replaced) -> dict[str, object]:
    return {"group": x.group, "region": x.region, "subgraph": x.subgraph, "invoke": x.invoke,
            "nodes": list(x.nodes)}  # fmt: skip


def _refused_json(x: Refused) -> dict[str, object]:
    return {"group": x.group, "region": x.region, "id": x.id, "reason": str(x.reason),
            "detail": x.detail, "nodes": list(x.nodes)}  # fmt: skip


def checks_json(report: Report) -> dict[str, str]:
    """The headline checks, one per obligation but `dependencies_preserved`, which needs
    dataflow and ordering: `ok` is false exactly when one of them is not `holds`."""
    both = (report.verdict_of(DATAFLOW), report.verdict_of(ORDERING))
    deps = "holds" if all(isinstance(v, Holds) for v in both) else _worst(both)
    return {
        "well_formed": verdict_name(report.verdict_of(WELL_FORMED)),
        "acyclic": verdict_name(report.verdict_of(ACYCLIC)),
        "dependencies_preserved": deps,
        "shapes_proven": verdict_name(report.verdict_of(SHAPES)),
        "outputs_match": verdict_name(report.verdict_of(NUMBERS)),
        "runs_in_torch": verdict_name(report.verdict_of(RUNTIME)),
    }


def _worst(verdicts: tuple[Verdict, ...]) -> str:
    names = [verdict_name(v) for v in verdicts]
    return "violated" if "violated" in names else "unknown"


def _progress(step: str) -> None:
    if sys.stderr.isatty():
        print(f"fxoracle: {step}...", file=sys.stderr, flush=True)


def run_verify(
    path: Path,
    dynamic: bool = False,
    split: Split | None = None,
    *,
    trust_pickles: bool = False,
    note: Note | None = None,
    device: torch.device | None = None,
) -> VerifyReport:
    """Load the input (model file, `.pt2`, GraphModule or `torch.save` file), capture or key
    it on `device` (default: where its inputs live, FIL-8), then run the pipeline; bad input is
    `FxOracleError`. A data file's pickles are read only with `trust_pickles`; `note` hears what
    was done instead (FIL-1)."""
    _progress("load")
    doing(f"verifying {shown_name(path)}")  # a crash in it is blamed on it (FIL-11)
    t0 = time.perf_counter()
    graph = load_graph(path, dynamic, trust_pickles=trust_pickles, note=note, device=device)
    capture_s = time.perf_counter() - t0
    return verify_capture(shown_name(path), graph, split, capture_s)


def verify_capture(
    name: str, graph: Capture, split: Split | None = None, capture_s: float = 0.0
) -> VerifyReport:
    """The pipeline on a captured (or loaded) graph, which it deduplicates in place."""
    nodes = len(graph.gm.graph.nodes)
    result = run_pipeline(graph.gm, graph.tracker, example_inputs=graph.example_inputs,
                          split=split, progress=_progress)  # fmt: skip
    calls = sum(1 for n in graph.gm.graph.nodes if n.target is INVOKE)
    return VerifyReport(name, nodes, result, calls, capture_s, device_of(graph.example_inputs))


def load_graph(
    path: Path,
    dynamic: bool = False,
    *,
    trust_pickles: bool = False,
    note: Note | None = None,
    device: torch.device | None = None,
) -> Capture:
    """A model file is moved to `device` and captured through Dynamo (live keys); graphs are
    keyed from metadata, and only where they live (FIL-8)."""
    loaded = load_any(path, trust_pickles=trust_pickles, note=note)
    if isinstance(loaded, Model):
        moved = on_device(loaded, device)
        with time_limit(f"capturing {loaded.name}"):  # the model runs: FIL-11
            return capture(moved.model, moved.example_inputs, moved.dynamic or dynamic)
    return graph_on_device(loaded, device)


def render_text(report: VerifyReport) -> str:
    """Graph size; each group with its regions' fate; the proofs; each check; timings."""
    r = report.result
    lines = [
        f"fxoracle verify: {report.model} ({TORCH.label}, {report.device})",
        f"  graph: {plural(report.nodes, 'node')}",
    ]
    kept = r.search.expansion.kept_regions()
    lines.append(f"  region groups: {len(kept)}")
    for i, group in enumerate(kept):
        lines.append(
            f"  group {i}: {plural(len(group), 'region')} x {plural(len(group[0]), 'node')}"
        )
        lines.append("    representative: [" + ", ".join(r.search.names(group[0])) + "]")
        lines.extend(f"    {line}" for line in region_outcomes(r.dedup, i, len(group)))
    lines.append(f"  subgraphs: {len(r.dedup.subgraphs)}, invoke calls: {report.invoke_calls}")
    lines.append("  checks:")
    lines.extend(f"    {line}" for line in r.check.render_text().splitlines()[:-1])
    if r.split is not None:
        lines.append(f"  split ({r.split.policy}): {plural(len(r.split.partitions), 'partition')}")
        lines.extend(f"    {line}" for line in r.split.check.render_text().splitlines()[:-1])
    steps = ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in r.timings.items())
    lines.append(f"  time: capture {report.capture_s:.2f} s, {steps}")
    lines.append(f"  ok: {str(report.ok).lower()}")
    return "\n".join(lines) + "\n"
