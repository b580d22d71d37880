"""Chapter 03, outlining: `plan` (what a subgraph takes and returns), `legality` (every
refusal), `contraction` (no cycle), `replace` (one region becomes one call), `bodies`
(higher-order ops' bodies), `dedup` (the driver)."""
