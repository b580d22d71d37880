"""08.1 (DIF-1, DIF-3): the example plug-in implements the tracker, dedup and sort, so those
are compared and split is skipped. Its sort order may differ from the reference's, but a valid
other order is a free choice (`neither`), listed and never failed: the diff exits 0."""

COMPARED = {"tracker", "dedup", "sort"}
SKIPPED = {"split"}
FAILS = False
