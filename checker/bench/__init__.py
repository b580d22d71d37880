"""Benchmarks: `fxoracle bench` (region finding and deduplication against torch)."""
