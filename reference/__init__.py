"""fxoracle's reference pipeline: key, expand, outline, order, split (see specs/).

Public surface (other tools test against these names):
`GraphRegionTracker`, `track_graph`, `find_identical_regions`, `FxOracleError`.
"""

from reference.errors import FxOracleError
from reference.regions import find_identical_regions
from reference.tracker import GraphRegionTracker, track_graph

__all__ = ["FxOracleError", "GraphRegionTracker", "find_identical_regions", "track_graph"]
