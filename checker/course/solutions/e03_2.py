"""03.2 (RPL-15): the second run finds nothing to replace (the replaced regions' nodes are
erased) and the code is unchanged, character for character."""

SECOND_RUN_REPLACES = 0
CODE_CHANGES = False
