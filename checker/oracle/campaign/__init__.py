"""Random models and fuzz campaigns over them (spec chapter 08, DIF-6, DIF-9, DIF-13, DIF-16)."""
