"""Chapter 09, effects: `node_effects` (what one node writes, shares, switches and draws),
`alias_db` (storage classes over a graph, kept up to date through replacement)."""
