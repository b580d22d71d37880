"""09.2 (EFF-5, SRT-12): `a` and `b` are views of one storage: one class, although they do not
overlap. `b.mul_(2)` writes the class, so `z = a + 1` follows it. The alias DB is conservative:
a storage, not the bytes of it a view covers."""

Z_FOLLOWS_MUL_ = True
