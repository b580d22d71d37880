"""What torch's own deduplication does on each real model, as a Markdown table for README.md.

For every model file here: `torch.compile(model, backend=<records the graph>, fullgraph=True)`
with `use_graph_deduplication=True` (every `invoke_subgraph` kept), then eager and compiled
outputs compared with `torch.testing.assert_close`. Run it after a torch upgrade:
`HF_HUB_OFFLINE=1 .venv/bin/python -m tests.support.realmodel_survey`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch

from checker.io.model_file import load_model_file
from reference.errors import describe
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

    flags = {"use_graph_deduplication": True, "inline_single_use_invoke_subgraph": False}
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


def main() -> int:
    print(f"| model | torch {torch.__version__.split('+')[0]}'s own pass |\n|---|---|")
    for path in sorted(HERE.glob("*.py")):
        print(f"| `{path.stem}` | {torch_pass(path)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
