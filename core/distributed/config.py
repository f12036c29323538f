"""The cluster's numbers, each with its range."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ClusterConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

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
    # Shards a worker keeps open (each a loaded KB and its indexes).
    open_shards: int = Field(default=16, ge=1, le=1024)
