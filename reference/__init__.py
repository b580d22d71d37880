"""fxoracle's reference pipeline: key, expand, outline, order, split (see specs/).

Public surface (other tools test against these names): `GraphRegionTracker`, `track_graph`,
`find_identical_regions`, `deduplicate`, `stable_topological_sort`, `split_module`, and
`FxOracleError`, the one exception type for bad input.
"""

from reference.dedup import DedupResult, deduplicate
from reference.errors import FxOracleError
from reference.order import stable_topological_sort
from reference.regions import find_identical_regions
from reference.split import split_module
from reference.tracker import GraphRegionTracker, track_graph

__all__ = [
    "DedupResult",
    "FxOracleError",
    "GraphRegionTracker",
    "deduplicate",
    "find_identical_regions",
    "split_module",
    "stable_topological_sort",
    "track_graph",
]
