"""fxoracle's reference pipeline: key, expand, outline, order, split (see specs/).

Public surface (other tools test against these names): `GraphRegionTracker`, `track_graph`,
`find_identical_regions`, `deduplicate`, `stable_topological_sort`, `split_module`, and
`FxOracleError`, the one exception type for bad input.
"""

from reference.errors import FxOracleError
from reference.expand.regions import find_identical_regions
from reference.key.tracker import GraphRegionTracker, track_graph
from reference.order.sort import stable_topological_sort
from reference.outline.dedup import DedupResult, deduplicate
from reference.split import split_module

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
