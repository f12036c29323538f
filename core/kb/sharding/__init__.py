"""A KB split into shards and searched by a cluster of workers (Dask distributed), with the same
results as one process: BM25F under gathered global statistics, HDC with the same calibration
(docs/scale.md)."""
