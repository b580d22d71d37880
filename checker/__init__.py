"""fxoracle's checker: proofs, reports and the CLI (see specs/06-checker.md).

Public surface: `check_transformation(original, transformed, example_inputs=None)` returning a
`Report` with `ok` and `violations`, and `make_gate(gm, deps)`, the replacer's gate.
"""

# first: on a torch fxoracle does not mirror, one line and exit 2 (reference.torch_version)
import reference.torch_version  # noqa: F401 (imported for that check)

# isort: split
from checker.proof.check import check_transformation
from checker.proof.gate import make_gate
from checker.proof.report import Report

__all__ = ["Report", "check_transformation", "make_gate"]
