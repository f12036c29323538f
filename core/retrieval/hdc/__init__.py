"""The hyperdimensional lane: vectors, encoding, the per-view index and the Hamming scan."""
