"""02.1 (EXP-3, EXP-6): step 1 compares `sin` with `tanh` and is refused (different targets).
Every queue pops anyway, so step 2 compares `cos` with `cos_1`, which join: position 1 means
the same node in both regions. If the refusing region kept `tanh` for the next step, step 2
would compare `cos` with `tanh`, refuse again, and the queues would stay misaligned: `cos_1`
would never meet `cos`, and the regions would stay `add` and `add_1` alone ("misaligned").
Nothing with different keys ever joins (EXP-6 still holds); the loss is what grows."""

STEP_2 = ("cos", "cos_1")
STEP_2_IF_REFUSERS_KEPT_THEIR_CANDIDATE = ("cos", "tanh")
WHAT_GOES_WRONG = "misaligned"
