"""Chapter 04, sort: the extra ordering dependencies (`deps`) and the stable topological sort
(`stable`), the plain path as torch has it. Beside them, what torch lacks: the policy's rules
(`rules`), the alias and draw rules (`aliases`), the cycle witness (`cycle`), the trace of
visits (`trace`) and the bad-input errors (`inputs`)."""
