"""Input and output: loading user graphs, making inputs, writing reports."""
