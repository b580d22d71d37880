"""What is run: the built-in implementations and loading a plug-in, the contract its results are
held to, the graph-level cases, and the two sides of a diff (spec chapter 08, DIF-1, DIF-2,
DIF-5, DIF-12)."""
