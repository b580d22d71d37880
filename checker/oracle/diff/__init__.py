"""`fxoracle diff`: the driver, its report, and diffing on several processes (spec chapter 08,
DIF-1 to DIF-14)."""
