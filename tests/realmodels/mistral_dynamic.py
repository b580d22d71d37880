"""`mistral.py` captured with dynamic shapes (`dynamic = True`): the batch and sequence sizes are
symbols, and the blocks read them from `x.shape`; they deduplicate as in static mode (RPL-27)."""

import runpy
from pathlib import Path

_static = runpy.run_path(str(Path(__file__).with_name("mistral.py")))
model, example_inputs = _static["model"], _static["example_inputs"]
dynamic = True
