"""Campaign findings for tests of what a campaign does with them (DIF-9)."""

from __future__ import annotations

from checker.oracle.campaign.findings import Finding
from checker.oracle.compare.divergence import Kind


def finding_of(signature: str) -> Finding:
    """The finding of one divergence with `signature` (`component/kind/wrong/case`)."""
    _, kind, wrong, _ = signature.split("/")
    return Finding(signature, Kind(kind), wrong, 1, "model_0", {}, "", None, wrong != "neither")
