"""A shard sends the coordinator units by id only from the caller's view of the shard, each with
the place its KB file gave it; a shard whose origins do not match its units is refused, and
shards cut before units kept their origins are cut again."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from core.infra.config import load_retrieval_config
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding import shard_tasks
from core.kb.sharding.origins import ORIGINS
from core.kb.sharding.shards import FORMAT, MANIFEST, ShardError, ensure_shards, open_shard
from core.units import Caller

SAMPLE = Path(__file__).resolve().parents[3] / "sample_kb"
EU = Caller(tags=frozenset({"support:eu"}), region="EU", as_of=dt.date(2026, 5, 1))
CALLERS = [Caller(as_of=dt.date(2026, 5, 1)), EU]


def test_a_shard_sends_only_the_callers_units_with_their_first_place(tmp_path) -> None:
    kb = KnowledgeBase.load([SAMPLE])
    folder, manifest = ensure_shards(kb, tmp_path, 3, units_per_file=4)
    config = load_retrieval_config()
    every_id = [unit.id for unit in kb.units]
    for caller in CALLERS:
        view = kb.view(caller)
        sent = [
            unit
            for name in manifest.folders
            for unit in shard_tasks.units(str(folder / name), config, caller, 4, every_id)
        ]
        # Exactly the caller's units, each as the KB read it (its file, line and column included).
        assert sorted(sent, key=lambda unit: unit.id) == list(view.units)
        assert all(unit.location is not None and unit.location.file.startswith(str(SAMPLE)) for unit in sent)
    hidden = {unit.id for unit in kb.units} - {unit.id for unit in kb.view(CALLERS[0]).units}
    assert hidden  # the sample KB restricts some units to EU support
    for name in manifest.folders:
        assert not shard_tasks.units(str(folder / name), config, CALLERS[0], 4, sorted(hidden))


def test_a_shard_whose_origins_do_not_match_its_units_is_refused(tmp_path) -> None:
    kb = KnowledgeBase.load([SAMPLE])
    folder, manifest = ensure_shards(kb, tmp_path, 2, units_per_file=4)
    shard = folder / manifest.folders[0]
    first = sorted(shard.glob(ORIGINS))[0]
    first.write_text('{"files": [], "ids": ["x"], "file": [-1], "line": [0], "col": [0], "prose": [false]}')
    with pytest.raises(ShardError, match=r"files do not list the shard's \d+ units in their order"):
        open_shard(shard, load_retrieval_config())
    first.write_text("{not json")
    with pytest.raises(ShardError, match=r"\.origins-00000\.json: not a shard's origins"):
        open_shard(shard, load_retrieval_config())
    first.unlink()
    with pytest.raises(ShardError, match="do not list"):
        open_shard(shard, load_retrieval_config())


def test_shards_cut_before_origins_were_kept_are_cut_again(tmp_path) -> None:
    kb = KnowledgeBase.load([SAMPLE])
    folder, manifest = ensure_shards(kb, tmp_path, 2, units_per_file=50)
    older = manifest.model_copy(update={"format": 1}).model_dump_json()
    (folder / MANIFEST).write_text(older, encoding="utf-8")
    for name in manifest.folders:
        for origins in (folder / name).glob(ORIGINS):
            origins.unlink()
    again, recut = ensure_shards(kb, tmp_path, 2, units_per_file=50)
    assert again == folder and recut.format == FORMAT
    assert all(any((folder / name).glob(ORIGINS)) for name in recut.folders)
