"""`fxoracle verify`: capture a model, key it, expand it and report (README "Report schema").

The report is a frozen value; `to_json` gives its stable JSON form (keys sorted, timings only in
keys ending `_s`), `render_text` the human form. Later steps (replace, prove, check) add fields.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from reference.capture import capture, load_model_file
from reference.expand import GroupExpansion
from reference.regions import RegionSearch, search_regions


@dataclass(frozen=True, slots=True)
class GroupReport:
    """One kept region group: its regions by node names."""

    regions: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What `fxoracle verify` found for one model."""

    model: str
    nodes: int
    groups: tuple[GroupReport, ...]
    refused_roots: int
    capture_s: float
    expand_s: float

    @property
    def ok(self) -> bool:
        return True

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "nodes": self.nodes,
            "region_groups": [[list(r) for r in g.regions] for g in self.groups],
            "refused_roots": self.refused_roots,
            "ok": self.ok,
            "timings": {"capture_s": round(self.capture_s, 3), "expand_s": round(self.expand_s, 3)},
        }


def run_verify(path: Path, dynamic: bool = False) -> VerifyReport:
    """Load, capture (fullgraph, our tracker), expand; raises FxOracleError on bad input."""
    model_file = load_model_file(path)
    t0 = time.perf_counter()
    captured = capture(model_file.model, model_file.example_inputs, model_file.dynamic or dynamic)
    t1 = time.perf_counter()
    search = search_regions(captured.gm.graph, captured.tracker)
    t2 = time.perf_counter()
    return VerifyReport(
        model=path.name,
        nodes=len(captured.gm.graph.nodes),
        groups=_group_reports(search),
        refused_roots=sum(len(g.claimed_roots) for g in search.expansion.groups),
        capture_s=t1 - t0,
        expand_s=t2 - t1,
    )


def _group_reports(search: RegionSearch) -> tuple[GroupReport, ...]:
    kept: list[GroupExpansion] = [g for g in search.expansion.groups if g.kept]
    return tuple(GroupReport(tuple(tuple(search.names(r)) for r in g.regions)) for g in kept)


def render_text(report: VerifyReport) -> str:
    """The human report: graph size, then each group as regions x nodes with its first region."""
    lines = [f"fxoracle verify: {report.model}", f"  graph: {report.nodes} nodes"]
    lines.append(f"  region groups: {len(report.groups)}")
    for i, g in enumerate(report.groups):
        lines.append(f"  group {i}: {len(g.regions)} regions x {len(g.regions[0])} nodes")
        for region in g.regions:
            lines.append("    [" + ", ".join(region) + "]")
    lines.append(f"  capture {report.capture_s:.2f} s, expand {report.expand_s:.3f} s")
    lines.append(f"  ok: {str(report.ok).lower()}")
    return "\n".join(lines) + "\n"
