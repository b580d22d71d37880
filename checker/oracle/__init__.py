"""The differential oracle: implementations under test, comparison, blame, repros, campaigns (spec
chapter 08)."""
