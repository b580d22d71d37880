"""Chapter 01, track: what a node's key is (`keys`), the tracker's buckets, live inside Dynamo
and offline (`tracker`, `offline`). Offline keying's fast path is `reference.fast.keys`, proved
equal to the plain one."""
