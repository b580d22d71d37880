"""Chapter 03, replace: what a group's subgraph takes and returns (`plan`), torch's refusals and
the order every refusal is asked in (`legality`), and the pass over one group, each accepted
region becoming one call (`outliner`). What torch lacks, each in its own module: the refusals
(`stricter`) and what they read (`context`), what torch's `invoke_subgraph` runtime takes and
returns (`runtime`), the metadata torch leaves out (`values`), the cycle refusal (`cycle`),
higher-order ops' bodies (`bodies`), dead code (`dead`)."""
