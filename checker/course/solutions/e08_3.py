"""08.3 (DIF-3): moving the update across the read changes what `s` reads (another version of
`x`'s storage): different meanings. Two independent nodes swapped mean the same."""

UPDATE_MOVED_SAME_MEANING = False
INDEPENDENT_SWAPPED_SAME_MEANING = True
