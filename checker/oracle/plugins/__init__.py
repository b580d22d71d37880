"""Example implementations under test: what a plug-in looks like (spec chapter 08, DIF-1)."""
