"""A KB split into shards and searched by a cluster of workers (Dask distributed), with the same
results as one process: BM25F under gathered global statistics, HDC with the same calibration
(docs/scale.md)."""

# The cluster's settings file in the config folder (core/kb/sharding/config.py): here, so a
# command can see there is none without importing the settings model.
CONFIG_FILE = "cluster.json"
