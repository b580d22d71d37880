"""03.3 (RPL-5): expansion finds the group `[ones, sin, cos]`, `[ones_1, sin_1, cos_1]`, but
region 0 has no external input: it is a constant computation. The replacer refuses the whole
group and installs no subgraph."""

REGIONS = [["ones", "sin", "cos"], ["ones_1", "sin_1", "cos_1"]]
INSTALLED: list[str] = []
REFUSAL = "RPL-5"
