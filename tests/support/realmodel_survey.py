"""What fxoracle and torch's own deduplication do on each real model: README.md's table.

For every model file here: `fxoracle verify` (nodes, region groups, replaced and refused
regions, ok), `fxoracle diff --against torch` (each divergence as `component:blamed side`), and
torch's own pass: `torch.compile(model, backend=<records the graph>, fullgraph=True)` with
`use_graph_deduplication=True` (every `invoke_subgraph` kept), eager and compiled outputs
compared with `torch.testing.assert_close`. Run it after a torch upgrade:
`HF_HUB_OFFLINE=1 .venv/bin/python -m tests.support.realmodel_survey [MODEL ...]` (the family
column is written by hand).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import torch

from checker.io.model_file import load_model_file
from checker.oracle.compare.divergence import Blame
from checker.oracle.diff.driver import run_diff
from checker.tools.verify import run_verify
from reference.errors import describe
from tests.support.corpus import keep_single_use
from tests.support.paths import ROOT

HERE = ROOT / "tests" / "realmodels"


def torch_pass(path: Path) -> str:
    """`match (N calls)`, `wrong: ...` or `crash: ...` for torch's pass on the model file."""
    model = load_model_file(path)
    expected = model.model(*model.example_inputs)
    calls: list[int] = []

    def backend(gm: torch.fx.GraphModule, inputs: list[Any]) -> Any:
        calls.append(
            sum(n.target is torch.ops.higher_order.invoke_subgraph for n in gm.graph.nodes)
        )
        return gm.forward

    flags = {"use_graph_deduplication": True, **keep_single_use()}
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(flags):
            compiled = torch.compile(
                model.model, backend=backend, fullgraph=True, dynamic=model.dynamic
            )
            got = compiled(*load_model_file(path).example_inputs)
        torch.testing.assert_close(got, expected)
    except AssertionError as e:
        return f"wrong: {describe(e)}"
    except Exception as e:  # torch's compile or its runtime raised
        return f"crash: {describe(e)[:120]}"
    finally:
        torch._dynamo.reset()
    return f"match ({sum(calls)} calls)"


def ours(path: Path) -> list[str]:
    """nodes, groups (regions x nodes), replaced, refusal ids, verify, diff against torch."""
    report = run_verify(path)
    dedup = report.result.dedup
    groups = ", ".join(f"{len(g)}x{len(g[0])}" for g in report.result.search.region_groups())
    refused = ", ".join(sorted({r.reason.id for r in dedup.refused})) or "-"
    found = run_diff([load_model_file(path)], "torch", "all").graphs[0].divergences
    counts = Counter(f"{d.component or 'oracle'}:{_side(d.blame)}" for d in found)
    diff = ", ".join(k if n == 1 else f"{k} x{n}" for k, n in sorted(counts.items())) or "agree"
    ok = "ok" if report.result.check.ok else "not ok"
    return [str(report.nodes), groups or "-", str(len(dedup.replaced)), refused, ok, diff]


def _side(blame: Blame) -> str:
    return "torch" if blame is Blame.OTHER else blame.value


def main(argv: list[str]) -> int:
    print(f"| model | nodes | groups | replaced | refused | verify | diff against torch | "
          f"torch {torch.__version__.split('+')[0]}'s own pass |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    paths = [HERE / f"{m}.py" for m in argv] or sorted(HERE.glob("*.py"))
    for path in paths:
        print("| " + " | ".join([f"`{path.stem}`", *ours(path), torch_pass(path)]) + " |",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
