"""Chapter 03 worked example: scenario D1 (`tests/corpus/d01_single_subgraph.py`) deduplicated;
the graph and the subgraph printed. `fxoracle explain tests/corpus/d01_single_subgraph.py`
narrates how the regions of this same model grew."""

from pathlib import Path

from checker.io.model_file import load_model_file
from reference import deduplicate
from reference.dynamo.capture import capture

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "corpus"
d1 = load_model_file(CORPUS / "d01_single_subgraph.py")
c = capture(d1.model, d1.example_inputs)
result = deduplicate(c.gm, c.tracker)
print(c.gm.code.strip())
print()
print(result.subgraphs["subgraph_0"].code.strip())
