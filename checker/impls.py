"""Removed: the module of fxoracle's first plug-in contract (spec chapter 08, DIF-20).

Importing it raises `ImportError` with one line that names where each of its names went and
points at the README's migration note ("Migrating from checker.impls"), so an old plug-in fails
to load with that line (exit 2), not with `No module named`. Nothing is re-exported: the
contract changed meaning (`find_regions` and `deduplicate` take a `CapturedGraph`, not a model
file's path; `DedupOutput` holds no `original` nor `inputs`), so an old plug-in that imported
the new types would still be wrong.
"""

MOVED = (
    "checker.impls was removed with fxoracle's first plug-in contract: import DedupOutput, "
    "FindsRegions, Deduplicates, Sorts, Splits, RegionGroups, Buckets, Callback, PARTS and "
    "parts_of from checker.oracle.protocol (find_regions and deduplicate now take a "
    "CapturedGraph, not a model path; DedupOutput(transformed, ...) holds no original nor "
    "inputs), ReferenceImpl, TorchImpl, TorchSimpleImpl and BUILT_IN from "
    "checker.oracle.sides.impls, load_impl and label_of from checker.oracle.sides.loading, "
    "SplitCase, SPLIT_CASES, HOSTILE_SPLIT_CASES and partition_ids from "
    "checker.oracle.sides.cases; see README.md, 'Migrating from checker.impls'"
)

raise ImportError(MOVED, name=__name__)
