"""Shards: a stable partition by unit id, written as ordinary KB folders that read back the same
units (permission fields included), with a manifest that names the KB version it was cut from."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

from core.infra.config import load_retrieval_config
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding.cluster import ClusterError, parse_cluster
from core.kb.sharding.config import ClusterConfig
from core.kb.sharding.shards import ShardError, ensure_shards, open_shard, partition, read_manifest, shard_of
from core.units import KnowledgeUnit, Relation, Role


def units(count: int) -> list[KnowledgeUnit]:
    return [
        KnowledgeUnit(
            id=f"kiln::chunk-{n:03d}::unit-000",
            source_id="kiln",
            chunk_id=f"chunk-{n:03d}",
            role=Role.PROCEDURE if n % 3 == 0 else Role.EXPLANATION,
            topic=f"Kiln step {n}",
            **({"procedure": "Load the shelves.\nClose the vent."} if n % 3 == 0 else {"claim": f"Cone {n} fires."}),
            acl=("ops",) if n % 2 else (),
            region="eu" if n % 5 == 0 else None,
            effective_to=dt.date(2027, 1, 1) if n % 4 == 0 else None,
            subject="kiln" if n % 7 == 0 else None,
            relation=Relation.USES if n % 7 == 0 else None,
            object="cone" if n % 7 == 0 else None,
        )
        for n in range(count)
    ]


def test_a_unit_lands_in_the_same_shard_in_every_process() -> None:
    ids = [u.id for u in units(30)]
    here = [shard_of(uid, 4) for uid in ids]
    # Another interpreter has another string-hash salt: the shard must not depend on it.
    code = f"from core.kb.sharding.shards import shard_of; print([shard_of(i, 4) for i in {ids!r}])"
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert str(here) == there.strip()
    assert len(set(here)) == 4  # 30 ids spread over every shard


def test_partition_keeps_every_unit_once() -> None:
    parts = partition(units(40), 3)
    assert sorted(u.id for part in parts for u in part) == sorted(u.id for u in units(40))
    assert all(shard_of(u.id, 3) == number for number, part in enumerate(parts) for u in part)


def test_shards_read_back_the_same_units_and_reuse_their_manifest(tmp_path) -> None:
    kb = KnowledgeBase.from_units(units(25))
    folder, manifest = ensure_shards(kb, tmp_path, 3, units_per_file=4)
    assert manifest.kb_digest == kb.version and sum(manifest.units) == 25
    read = {}
    for name in manifest.folders:
        shard, _ = open_shard(folder / name, load_retrieval_config())
        assert not shard.diagnostics
        # Every field but where it was read from.
        read.update({u.id: u.model_copy(update={"location": None}) for u in shard.units})
    assert read == {u.id: u for u in kb.units}
    assert (folder / manifest.folders[0] / ".index").is_dir()  # each shard has its own index store
    stamp = (folder / "manifest.json").stat().st_mtime_ns
    assert ensure_shards(kb, tmp_path, 3, units_per_file=4) == (folder, manifest)
    assert (folder / "manifest.json").stat().st_mtime_ns == stamp  # found, not cut again


def test_a_shard_that_cannot_be_read_whole_is_a_named_error(tmp_path) -> None:
    folder, manifest = ensure_shards(KnowledgeBase.from_units(units(12)), tmp_path, 2, units_per_file=2)
    shard = folder / manifest.folders[0]
    next(shard.glob("units-*.md")).unlink()
    with pytest.raises(ShardError, match=r"shard-0000: \d+ units read, its manifest says \d+"):
        open_shard(shard, load_retrieval_config())
    with pytest.raises(ShardError, match="manifest.json"):  # a folder this worker cannot see
        open_shard(tmp_path / "elsewhere" / "shard-0000", load_retrieval_config())


def test_a_damaged_manifest_is_a_named_error(tmp_path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ShardError, match="manifest.json: not a shard manifest"):
        read_manifest(tmp_path)


def test_cluster_specs() -> None:
    config = ClusterConfig()
    assert parse_cluster("local:2", config) == 2
    assert parse_cluster("tcp://10.0.0.5:8786", config) == "tcp://10.0.0.5:8786"
    for bad in ("local:0", "local:999", "local", "local:two", " "):
        with pytest.raises(ClusterError):
            parse_cluster(bad, config)


def test_a_link_planted_in_the_shards_folder_is_refused_not_followed(tmp_path) -> None:
    kb = KnowledgeBase.from_units(units(12))
    folder, manifest = ensure_shards(kb, tmp_path / "shards", 2, units_per_file=4)
    elsewhere = tmp_path / "elsewhere"
    shard = folder / manifest.folders[1]
    shard.rename(elsewhere)
    shard.symlink_to(elsewhere)
    with pytest.raises(ShardError, match=rf"refusing the shards at {folder}: {shard} is a symbolic link"):
        ensure_shards(kb, tmp_path / "shards", 2, units_per_file=4)
    # The folder of the cut itself a link: refused too, before anything is written through it.
    other = tmp_path / "other"
    other.mkdir()
    linked = folder.parent / f"{folder.name[:-2]}-3"
    linked.symlink_to(other)
    with pytest.raises(ShardError, match="is a symbolic link"):
        ensure_shards(kb, tmp_path / "shards", 3, units_per_file=4)
    assert list(other.iterdir()) == []
