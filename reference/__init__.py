"""fxoracle reference pipeline: key, expand, outline, order, split (see specs/)."""
