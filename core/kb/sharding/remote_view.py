"""A caller's view at a coordinator that opened only the shards' manifest: it holds no KB column.

What the engine asks of a view is answered by the shards, each applying the caller's view of its
part before it answers (the view is sent, never the units): which ids the view holds and their
roles, how many units it holds and its version, a file's units in reading order, and the units
themselves, by id. So a unit the caller may not see never reaches the coordinator, and the
coordinator's memory no longer grows with the KB. What needs every unit of the view at hand
(excluding units while debugging, `--why-not`, the dense lane, learned HDC token vectors) is not
served here: the commands that need it open the KB in their own process.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NoReturn

from core.kb.sharding import shard_tasks
from core.kb.sharding.sharded_view import FileUnits, Kept, Shards
from core.kb.sharding.shards import ShardError
from core.kb.view import KBView, digest_lines
from core.store.segment import unit_digest
from core.units import Caller, KnowledgeUnit, Role

# Ids whose membership and role a caller's view keeps (fusion asks for ~1,000 a question).
_ROLES_KEPT = 65_536
# Files whose reading order a caller's view keeps (a question's passages read a few).
_FILES_KEPT = 16

Place = tuple[int, int, str]  # line, column, id: a unit's place in its file's reading order


class _Answers:
    """What the shards said of one caller's view, shared by the views that extend it with
    current-turn units: fetched units, roles (None: not in the view), size and version, files'
    reading orders. Each bounded."""

    def __init__(self) -> None:
        self.fetched: Kept[KnowledgeUnit] = Kept()
        self.roles: Kept[Role | None] = Kept(_ROLES_KEPT)
        self.files: OrderedDict[str, list[Place]] = OrderedDict()
        self.described: tuple[int, str] | None = None
        self.lock = threading.Lock()


class RemoteView(KBView):
    """`KBView` whose every answer comes from the shards; it has no table, rows or segments."""

    __slots__ = ("_answers", "_shards")
    _answers: _Answers
    _shards: Shards

    @classmethod
    def of(cls, shards: Shards, kb_version: str, caller: Caller) -> RemoteView:
        """The caller's view of the KB of version `kb_version` that `shards` were cut from."""
        view = cls.__new__(cls)
        view._key = (kb_version, caller.key, "")
        view._caller = caller
        view._version = None
        view._stored = None
        view._base = None
        view._extra = ()
        view._extra_ids = {}
        view._by_file = {}
        view._shards = shards
        view._answers = _Answers()
        return view

    def _base_roles(self, unit_ids: Iterable[str]) -> dict[str, Role | None]:
        """The role of each id in the shards' part of the view (None: not in it), those not known
        yet asked of every shard in one round of tasks."""
        ids = list(dict.fromkeys(unit_ids))
        found = self._answers.roles.get(ids)
        wanted = [uid for uid in ids if uid not in found]
        if wanted:
            said: dict[str, Role | None] = dict.fromkeys(wanted)
            for part in self._shards.each(shard_tasks.roles, self, wanted):
                said.update(part)
            self._answers.roles.keep(said)
            found |= said
        return found

    def roles_of(self, unit_ids: Iterable[str]) -> tuple[dict[str, Role | None], frozenset[str]]:
        ids = list(unit_ids)
        base = self._base_roles(uid for uid in ids if uid not in self._extra_ids)
        roles = {uid: self._extra_ids[uid].role if uid in self._extra_ids else base[uid] for uid in ids}
        return roles, frozenset(uid for uid in ids if uid in self._extra_ids)

    def role_of(self, unit_id: str) -> Role | None:
        return self.roles_of((unit_id,))[0][unit_id]

    def is_current(self, unit_id: str) -> bool:
        return unit_id in self._extra_ids  # a current-turn unit is never one of the shards'

    def __contains__(self, unit_id: object) -> bool:
        if not isinstance(unit_id, str):
            return False
        return unit_id in self._extra_ids or self._base_roles((unit_id,))[unit_id] is not None

    def get(self, unit_id: str) -> KnowledgeUnit | None:
        found = self.units_of((unit_id,))
        return found[0] if found else None

    def units_of(self, unit_ids: Iterable[str]) -> list[KnowledgeUnit]:
        """The view's units of these ids, in order; those not fetched yet in one round of tasks
        (an id the shards' part of the view does not hold comes back from none of them)."""
        ids = list(unit_ids)
        held = [uid for uid in dict.fromkeys(ids) if uid not in self._extra_ids]
        absent = {uid for uid, role in self._answers.roles.get(held).items() if role is None}
        found = self._answers.fetched.get(held)
        wanted = [uid for uid in held if uid not in found and uid not in absent]
        if wanted:
            sent = {unit.id: unit for part in self._shards.each(shard_tasks.units, self, wanted) for unit in part}
            self._answers.fetched.keep(sent)
            self._answers.roles.keep({uid: sent[uid].role if uid in sent else None for uid in wanted})
            found |= sent
        return [
            found[uid] if uid in found else self._extra_ids[uid]
            for uid in ids
            if uid in found or uid in self._extra_ids
        ]

    def _described(self) -> tuple[int, str]:
        """How many units the shards' part of the view holds, and a digest of their versions."""
        answers = self._answers
        if answers.described is None:
            parts = self._shards.each(shard_tasks.describe, self)
            answers.described = (sum(size for size, _ in parts), digest_lines(version for _, version in parts))
        return answers.described

    def __len__(self) -> int:
        return self._described()[0] + len(self._extra)

    @property
    def version(self) -> str:
        """A digest of the shards' views' versions (and the current-turn units): it changes only
        when what this caller sees changes. Not one process's digest (that hashes every unit of
        the view in id order): only the trace shows it."""
        if self._version is None:
            extra = b"".join(unit_digest(unit) for unit in self._extra)
            self._version = hashlib.sha256(self._described()[1].encode() + extra).hexdigest()[:16]
        return self._version

    def in_file(self, file: str) -> Sequence[KnowledgeUnit]:  # type: ignore[override]
        """The view's units read from `file` in reading order (line, column, id): each shard
        sends its part's places, merged here; the units are fetched when read."""
        places = [*self._file_places(file)]
        places += [
            (u.location.line, u.location.col, u.id) for u in self._extra if u.location and u.location.file == file
        ]
        return FileUnits(_Ids([uid for _, _, uid in sorted(places)]), self)

    def _file_places(self, file: str) -> list[Place]:
        answers = self._answers
        with answers.lock:
            found = answers.files.get(file)
        if found is None:
            found = sorted(place for part in self._shards.each(shard_tasks.file_order, self, file) for place in part)
            with answers.lock:
                answers.files[file] = found
                while len(answers.files) > _FILES_KEPT:
                    answers.files.popitem(last=False)
        return found

    def hidden_files(self) -> set[str]:
        restricted: set[str] = set()
        seen: set[str] = set()
        for part_restricted, part_seen in self._shards.each(shard_tasks.files_seen, self):
            restricted |= part_restricted
            seen |= part_seen
        return restricted - seen

    def with_extra(self, units: Iterable[KnowledgeUnit]) -> KBView:
        """This view with the request's own units, marked current-turn; one whose id the view
        holds already is left out (the KB's unit stays), as `KBView.with_extra`."""
        given = list(units)
        held = self._base_roles(u.id for u in given if u.id not in self._extra_ids)
        extra = tuple(
            u.model_copy(update={"current_turn": True})
            for u in given
            if u.id not in self._extra_ids and held.get(u.id) is None
        )
        if not extra:
            return self
        version, caller, earlier = self._key
        view = RemoteView.of(self._shards, version, self._caller)
        view._key = (version, caller, digest_lines([earlier, digest_lines(u.model_dump_json() for u in extra)]))
        view._answers = self._answers
        view._base = self._base or self
        view._extra = (*self._extra, *extra)
        view._extra_ids = {unit.id: unit for unit in view._extra}
        return view

    def _whole(self, what: str) -> NoReturn:
        raise ShardError(f"{what} needs the KB opened in this process: a coordinator holds only its shards' manifest")

    @property
    def table(self) -> Any:
        self._whole("the view's unit table")

    @property
    def rows(self) -> Any:
        self._whole("the view's rows")

    @property
    def units(self) -> Any:
        self._whole("listing every unit of the view")

    def fact_units(self) -> Any:
        self._whole("ThinkingDB over the whole view")

    def __iter__(self) -> Iterator[KnowledgeUnit]:
        self._whole("listing every unit of the view")

    def row_of(self, unit_id: str) -> int | None:
        self._whole("a unit's table row")

    def clashing(self, unit_id: str) -> int:
        self._whole("counting a clashing id's units")

    def without(self, unit_ids: Iterable[str]) -> KBView:
        self._whole("excluding units from the view")


class _Ids:
    """A file's unit ids in reading order, as `FileUnits` reads them."""

    def __init__(self, ids: list[str]):
        self._ids = ids

    def __len__(self) -> int:
        return len(self._ids)

    def id_at(self, index: int) -> str:
        return self._ids[index]

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        return self._ids.index(value.id, start, len(self._ids) if stop is None else stop)
