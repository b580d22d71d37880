"""06.4 (CHK-4, SPL-9): with `keep_original_order=False`, torch's LIFO order runs the code after
both blocks (`t`) first, then the partitions that hold only an autocast enter or exit, then the
blocks. CHK-4 holds: every partition re-enters the autocast state its nodes ran in, so each
node runs in its original state although the switches run in another order. A check of edges
between the switches would have paired the original enter with an early copy and reported a
false violation (findings C2, C3)."""

CHK4 = "holds"
FIRST_PARTITION_NODES = ["t"]
