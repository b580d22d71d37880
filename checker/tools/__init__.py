"""What users run: verify, explain, the pipeline and the torch.compile backend."""
