"""Workers: one work-stealing pool (processes or Ray), Ctrl-C handling, workers that die with
their parent, and one progress bar (spec chapter 08, DIF-13, DIF-14, DIF-17)."""
