"""Chapter 03, replace: what a group's subgraph takes and returns (`plan`), every refusal
(`legality`, with `runtime`: what torch's `invoke_subgraph` runtime takes and returns), the cycle
refusal (`cycle`), one region becomes one call (`region`), higher-order ops' bodies (`bodies`),
dead code (`dead`), and the pass over one group (`outliner`)."""
