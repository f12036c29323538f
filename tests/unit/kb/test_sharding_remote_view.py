"""A coordinator's view answered by the shards (remote_view.py), here with each shard's task run
in this process: membership, roles, size, a file's reading order, units and the files a caller's
diagnostics leave out are those of the caller's view of the KB itself, for a public and an ACL
caller; current-turn units join as `KBView.with_extra` adds them. A KB path a worker cannot see
fails the cut, never cuts an empty KB."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.infra.config import load_retrieval_config
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding.remote_view import RemoteView
from core.kb.sharding.shards import ShardError, cut, ensure_shards
from core.units import Caller, Role, SourceLocation

SAMPLE = Path(__file__).resolve().parents[3] / "sample_kb"
EU = Caller(tags=frozenset({"support:eu"}), region="EU", as_of=dt.date(2026, 5, 1))
CALLERS = [Caller(as_of=dt.date(2026, 5, 1)), EU]


class _InProcess:
    """Every shard's task run here, as a worker runs it; counts the rounds."""

    def __init__(self, folders: list[str]):
        self.folders = folders
        self.config = load_retrieval_config()
        self.rounds = 0

    def each(self, task: Callable[..., Any], view: Any, *args: Any) -> list[Any]:
        self.rounds += 1
        return [task(folder, self.config, view.caller, 4, *args) for folder in self.folders]


@pytest.fixture(scope="module")
def sharded(tmp_path_factory) -> tuple[KnowledgeBase, _InProcess]:
    kb = KnowledgeBase.load([SAMPLE])
    folder, manifest = ensure_shards(kb, tmp_path_factory.mktemp("shards"), 3, units_per_file=4)
    return kb, _InProcess([str(folder / name) for name in manifest.folders])


@pytest.mark.parametrize("caller", CALLERS)
def test_the_shards_answer_what_the_callers_view_holds(sharded, caller) -> None:
    kb, shards = sharded
    view, remote = kb.view(caller), RemoteView.of(shards, kb.version, caller)
    every = [unit.id for unit in kb.units]
    assert len(remote) == len(view)
    assert remote.roles_of(every) == view.roles_of(every)
    assert [uid for uid in every if uid in remote] == [uid for uid in every if uid in view]
    assert remote.units_of(every) == view.units_of(every) != []
    assert remote.hidden_files() == view.hidden_files()
    for file in {unit.location.file for unit in kb.units if unit.location}:
        assert [u.id for u in remote.in_file(file)] == [u.id for u in view.in_file(file)]


def test_a_unit_the_caller_may_not_see_is_absent_and_stays_absent(sharded) -> None:
    kb, shards = sharded
    public = RemoteView.of(shards, kb.version, CALLERS[0])
    hidden = sorted({u.id for u in kb.units} - {u.id for u in kb.view(CALLERS[0]).units})
    assert hidden
    assert public.units_of(hidden) == [] and public.roles_of(hidden)[0] == dict.fromkeys(hidden)
    rounds = shards.rounds
    assert not any(uid in public for uid in hidden) and public.get(hidden[0]) is None
    assert shards.rounds == rounds  # known absent: not asked again


def test_current_turn_units_join_the_remote_view_as_they_join_a_view(sharded) -> None:
    kb, shards = sharded
    view, remote = kb.view(EU), RemoteView.of(shards, kb.version, EU)
    file = next(unit.location.file for unit in view.units if unit.location)
    taken = next(iter(view.units)).model_copy(update={"role": Role.DEFINITION})  # an id the view holds
    new = taken.model_copy(update={"id": "turn::note", "location": SourceLocation(file=file, line=2, col=1)})
    local, spread = view.with_extra([taken, new]), remote.with_extra([taken, new])
    assert spread.key == local.key and spread.base is remote and len(spread) == len(local)
    assert spread.roles_of([taken.id, new.id]) == local.roles_of([taken.id, new.id])
    assert spread.units_of([taken.id, new.id]) == local.units_of([taken.id, new.id])
    assert [u.id for u in spread.in_file(file)] == [u.id for u in local.in_file(file)]
    assert spread.version != remote.version


def test_a_kb_path_the_cutting_worker_cannot_see_fails_the_cut(tmp_path) -> None:
    with pytest.raises(ShardError, match="not found on the worker that cuts the KB"):
        cut([str(tmp_path / "elsewhere")], str(tmp_path / "shards"), 2, 50, load_retrieval_config(), None)
    assert not (tmp_path / "shards").exists()
