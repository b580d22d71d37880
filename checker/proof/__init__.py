"""The checker's proofs: obligations, verdicts, reports, z3 and the gate (spec chapter 06)."""
