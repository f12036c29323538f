"""Field-weighted BM25: the index, its layout, parts, pruned top-k and explanations."""
