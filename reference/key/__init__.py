"""Chapter 01, node identity: `keys` (what a key is), `tracker` (the buckets, live and
offline), `fast_keys` (offline keying's fast path, proved equal to the plain one)."""
