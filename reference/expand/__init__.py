"""Chapter 02, region expansion: `graph_view` (the graph as plain data), `lockstep` (growing
regions in lock-step), `regions` (the torch-facing entry)."""
