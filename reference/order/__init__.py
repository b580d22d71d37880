"""Chapter 04, ordering: `deps` (the extra ordering dependencies), `sort` (the stable
topological sort)."""
