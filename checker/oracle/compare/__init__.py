"""Comparing the two sides on one capture and blaming the wrong one: canonical and meaning
forms, the judge, divergences and the catalogue of torch's known bugs (spec chapter 08, DIF-2
to DIF-5, DIF-11)."""
