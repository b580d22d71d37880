"""Repros: a pure shrinker (`ddmin`), source and graph reduction, the repro's text, and the
proof that it fails standalone before it is written (spec chapter 08, DIF-7, DIF-8, DIF-15)."""
