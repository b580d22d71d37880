"""fxoracle's reference pipeline: track, expand, replace, sort, split (see specs/). Start reading
at `reference/pipeline.py`.

Public surface (other tools test against these names): `GraphRegionTracker`, `track_graph`,
`find_identical_regions`, `deduplicate`, `deduplicate_graph`, `stable_topological_sort`,
`split_module`, and `FxOracleError`, the one exception type for bad input.
"""

# first: on a torch fxoracle does not mirror, one line and exit 2 before anything reads
# torch's internals (reference.torch_version.installed)
import reference.torch_version  # noqa: F401 (imported for that check)

# isort: split
from reference.errors import FxOracleError
from reference.expand.regions import find_identical_regions
from reference.pipeline import deduplicate, deduplicate_graph
from reference.replace.outliner import DedupResult
from reference.sort.stable import stable_topological_sort
from reference.split import split_module
from reference.track.offline import track_graph
from reference.track.tracker import GraphRegionTracker

__all__ = [
    "DedupResult",
    "FxOracleError",
    "GraphRegionTracker",
    "deduplicate",
    "deduplicate_graph",
    "find_identical_regions",
    "split_module",
    "stable_topological_sort",
    "track_graph",
]
