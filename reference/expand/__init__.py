"""Chapter 02, region expansion: `lockstep` (the graph as plain data, and growing regions over it
in lock-step), `regions` (the torch-facing entry: an fx graph's view, its region groups)."""
