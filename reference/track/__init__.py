"""Chapter 01, track: what a node's key is (`keys`), the tracker's buckets, live inside Dynamo
and offline (`tracker`, `offline`), and offline keying's fast path (`fast_keys`, proved equal
to the plain one)."""
