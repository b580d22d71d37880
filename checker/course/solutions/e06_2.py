"""06.2 (CHK-6, CHK-7): tensors on the meta device have no values, so the numbers (CHK-6) and
torch's runtime check (CHK-17, which runs the module too) are Unknown. Nothing is violated, yet
the report is not ok: unknown is never a pass."""

VIOLATED: set[str] = set()
UNKNOWN = {"CHK-6", "CHK-17"}
OK = False
