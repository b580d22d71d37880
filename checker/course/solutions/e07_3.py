"""07.3 (SHP-10, SHP-12): `5 <= s0 <= 3` admits no `s0`; from contradictory facts everything
follows, so the answer is Unknown (SHP-10), never Holds. Sizes of different lengths are
Violated without a query (SHP-12)."""

from checker.proof.shapes import ShapeFacts, SymbolRange

FACTS = ShapeFacts(ranges=(SymbolRange("s0", 5, 3),))
VERDICT = "Unknown"
DIFFERENT_LENGTHS = "Violated"
