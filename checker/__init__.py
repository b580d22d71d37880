"""fxoracle checker: proofs, reports and the CLI (see specs/)."""
