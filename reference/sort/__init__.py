"""Chapter 04, sort: the extra ordering dependencies (`deps`) and the stable topological sort
(`stable`)."""
