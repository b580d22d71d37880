"""Speed-ups of the reference's plain definitions, each proved equal to its plain path by a test."""
