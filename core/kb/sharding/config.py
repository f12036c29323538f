"""The cluster's settings, each number with its range: `cluster.json` in the config folder
(optional; the bundled config has none, so nothing runs on a cluster unless asked)."""

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from core.infra.config import validated
from core.infra.resources import config_dir
from core.kb.sharding import CONFIG_FILE


class ClusterConfig(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid", allow_inf_nan=False
    )

    # The scheduler every command uses without --cluster (tcp://host:8786, or local:N); none: one process.
    address: str | None = Field(default=None, min_length=1, max_length=500)

    # Units are split into this many shards (each an ordinary KB folder with its own index store).
    shards: int = Field(default=4, ge=1, le=1024)
    # Units per Markdown file of a shard: a file stays well under the readers' size caps.
    units_per_file: int = Field(default=5_000, ge=1, le=100_000)
    # `local:N` starts at most this many worker processes.
    max_local_workers: int = Field(default=16, ge=1, le=256)
    # How long a question waits for every shard's answer; below the plugin timeout
    # (budgets.pluginTimeoutMs, 10 s), so a silent shard is named before the kernel gives up.
    shard_timeout_ms: int = Field(default=5_000, ge=50, le=600_000)
    # After a shard failed, how long every question fails at once with the same reason.
    retry_after_ms: int = Field(default=2_000, ge=0, le=600_000)
    # How long the coordinator keeps the scheduler's list of workers before asking again.
    worker_list_ms: int = Field(default=5_000, ge=0, le=600_000)
    # Seconds to start a local cluster or reach a scheduler.
    connect_timeout_s: float = Field(default=60.0, ge=1.0, le=600.0)
    # Seconds one worker may take to read a KB without shards and cut it (once per KB version):
    # without the store's build pool a worker read a 1M-unit KB in more than 10 min at load 8.
    cut_timeout_s: float = Field(default=3_600.0, ge=1.0, le=86_400.0)
    # Shards a worker keeps open (each a loaded KB and its indexes).
    open_shards: int = Field(default=16, ge=1, le=1024)
    # Values (retrieval settings, rule sets) kept on every worker for reuse: each reload of the
    # config or the rules puts a new one there, so the oldest are released past this many.
    shared_values: int = Field(default=8, ge=1, le=1024)
    # How often a question waiting for its shards checks whether it was cancelled (Esc, a
    # deadline): the longest a cancelled question keeps waiting for shards it no longer needs.
    cancel_poll_ms: int = Field(default=50, ge=5, le=5_000)


def load_cluster_config(directory: Path | None = None) -> ClusterConfig:
    """`cluster.json` of the config folder, else the defaults; raises ConfigError (file, line)."""
    path = (directory or config_dir()) / CONFIG_FILE
    return validated(ClusterConfig, path) if path.exists() else ClusterConfig()
