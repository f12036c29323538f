"""One caller's memory for one conversation: its turns and summaries, plus the caller's durable notes.

A record is offered to a question only while every unit it cited is in the caller's current view
with the content digest the turn recorded (core/memory/cited.py), so a reload that withdraws or edits
a unit, or a caller who may not see it, withholds the record too (fail closed), and says why.

The records are what the files hold now, not a copy taken when the conversation opened: every
question re-reads them (a stat when nothing changed) and every change is made to the file as it is
under its lock (core/memory/journal.py), so several asks, an explorer and `memory clear` may share a
conversation. A file that cannot be read or written is a warning (`take_warnings`), never an error:
the answer a turn records matters more than the record. A file that could not be read is never
written, so it cannot be replaced.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from core.infra.config import HdcConfig, MemoryConfig
from core.infra.diagnostics import Code, Diagnostic
from core.memory import vectors
from core.memory.cited import CitedView, usable
from core.memory.compaction import compact
from core.memory.journal import Change, Ephemeral, Journal, MemoryFileError, Replay, Tombstone
from core.memory.records import MAX_TEXT_CHARS, MemoryRecord, Scope, caller_digest, record_id
from core.memory.scoring import RecordArrays, ScoredRecord, score_records
from core.memory.store import MemoryStore
from core.retrieval.hdc.encoding import encoding_options, field_scores, noise_floor, token_vectors
from core.retrieval.hdc.vectors import WORDS, encode_ngrams, encode_ngrams_batch
from core.text.tokenizer import tokenize
from core.units import Caller

T = TypeVar("T")

# At most this many of a file's loader problems become warnings of one command; the rest are counted.
SHOWN_PROBLEMS = 3


class Conversation:
    def __init__(
        self,
        caller: Caller,
        name: str | None,
        config: MemoryConfig,
        hdc: HdcConfig,
        store: MemoryStore | None = None,
        clock: Callable[[], float] = time.time,
    ):
        """`name` None keeps the conversation in memory only (the explorer's unnamed session);
        `store` None keeps everything in memory (tests, an embedding program with its own storage)."""
        self.caller = caller_digest(caller)
        self.name = name
        self.config = config
        self.hdc = hdc
        self.store = store
        self.clock = clock
        self._logs: dict[Scope, Journal | Ephemeral] = {
            "session": store.journal(self.caller, name) if store and name else Ephemeral(),
            "user": store.journal(self.caller, None) if store else Ephemeral(),
        }
        self._state: dict[Scope, Replay] = {"session": Replay(), "user": Replay()}
        self._failed: dict[Scope, str] = {}  # why a file could not be read: it is not written either
        self._warnings: list[str] = []
        self._reported: set[str] = set()
        self._vectors: dict[bytes, np.ndarray] = {}
        self._keys: dict[str, tuple[str, bytes]] = {}
        self._sides: dict[Scope, vectors.SideFile] = {}
        self._header = vectors.header(encoding_options(hdc, None))
        self._cached: tuple[tuple[str, ...], RecordArrays, np.ndarray] | None = None
        self.refresh()

    @property
    def turns(self) -> list[MemoryRecord]:
        return self._state["session"].records

    @property
    def notes(self) -> list[MemoryRecord]:
        return self._state["user"].records

    @property
    def records(self) -> list[MemoryRecord]:
        return [*self.turns, *self.notes]

    @property
    def problems(self) -> list[Diagnostic]:
        """What reading the files found: lines dropped, files that could not be read."""
        unread = [
            Diagnostic(code=Code.FILE_UNREADABLE, message=f"memory not read: {why}", file=str(self._path(scope)))
            for scope, why in self._failed.items()
        ]
        return [*unread, *(d for replay in self._state.values() for d in replay.problems)]

    def take_warnings(self) -> list[str]:
        """One line for each new problem since the last call (the same problem is said once)."""
        warnings, self._warnings = self._warnings, []
        return warnings

    def refresh(self) -> None:
        """Read both files as they are now (a stat each while they are unchanged)."""
        stored = [scope for scope, log in self._logs.items() if isinstance(log, Journal)]
        try:
            if self.store is not None:
                self.store.check_folders(self.caller)
        except MemoryFileError as exc:
            self._unreadable(stored, exc)
            return
        for scope in stored:
            try:
                self._state[scope] = self._logs[scope].read()
            except MemoryFileError as exc:
                self._unreadable([scope], exc)
                continue
            self._failed.pop(scope, None)
            self._load_vectors(scope)
        for replay in self._state.values():
            for index, problem in enumerate(replay.problems):
                if index == SHOWN_PROBLEMS:
                    self._warn(f"{problem.file}: {len(replay.problems) - index} more memory line(s) dropped")
                    break
                self._warn(problem.format())

    def continues(self, previous: Conversation) -> None:
        """Keep the turns of `previous` when this conversation is not stored (an unnamed session
        outlives a KB reload)."""
        if isinstance(self._logs["session"], Ephemeral):
            self._logs["session"], self._state["session"] = previous._logs["session"], previous._state["session"]

    def vetted(self, view: CitedView | None) -> tuple[list[MemoryRecord], list[str]]:
        """The records that may be reused in `view` (None: a view of nothing), and a line for each
        one withheld (`turn 2 not used: orion::… has changed since`)."""
        self.refresh()
        return usable(self.records, view)

    def recall(self, question: str, view: CitedView | None, limit: int | None = None) -> list[ScoredRecord]:
        """The records the caller may still reuse, scored for `question`, best first (`limit`: the best few)."""
        return self.score(question, self.vetted(view)[0], limit)

    def score(self, question: str, visible: list[MemoryRecord], limit: int | None = None) -> list[ScoredRecord]:
        """`visible` (records `vetted` kept) scored for `question`, best first."""
        if not visible:
            return []
        arrays, matrix = self._arrays(visible)
        distances = np.bitwise_count(matrix ^ self._encode(question)).sum(axis=1, dtype=np.int64)
        # sim ∈ [0, 1]: the HDC lane's calibrated similarity of the question to each record's text.
        sims = field_scores(distances, noise_floor(self.hdc))
        return score_records(arrays, sims, self.clock(), self.config, limit)

    def _arrays(self, records: list[MemoryRecord]) -> tuple[RecordArrays, np.ndarray]:
        ids = tuple(r.id for r in records)
        if self._cached is None or self._cached[0] != ids:
            self._cached = (ids, RecordArrays.of(records, self.config), self._matrix(records))
        return self._cached[1], self._cached[2]

    def remember(self, question: str, lead: str, entity: str, cited: dict[str, str]) -> MemoryRecord | None:
        """Record a finished turn (compacting old turns past `compactAfterTurns`); `cited`: each cited
        unit's id and content digest (core/memory/cited.py). None when it could not be saved."""

        def add(log: Change) -> MemoryRecord:
            # Numbered from the file as it is now: concurrent asks of one conversation get 1, 2, 3, ….
            turn = 1 + max((r.turn for r in log.records), default=0)
            record = self._record("session", "turn", question, lead, entity, cited, turn)
            log.append([record])
            self._compact(log)
            return record

        return self._apply("session", add)

    def note(self, text: str, cited: dict[str, str] | None = None, entity: str = "") -> MemoryRecord | None:
        """A durable note in the user's memory (scope `user`), shared by all of this caller's conversations."""

        def add(log: Change) -> MemoryRecord:
            record = self._record("user", "note", text, "", entity, cited or {}, 0)
            log.append([record])
            self._tidy(log)
            return record

        return self._apply("user", add)

    def forget(self, record_id_: str) -> bool:
        """Forget one record wherever it is; a tombstone first, so it never comes back."""

        def drop(log: Change) -> bool:
            if all(r.id != record_id_ for r in log.records):
                return False
            log.append(tombstone=Tombstone(forget=(record_id_,), ts=self.clock()))
            self._tidy(log)
            return True

        self.refresh()
        owners = [scope for scope, replay in self._state.items() if any(r.id == record_id_ for r in replay.records)]
        return any([bool(self._apply(scope, drop)) for scope in owners])

    def clear(self, scope: Scope | None = None) -> int | None:
        """Forget every record of `scope` (both scopes when None); how many went, None when a file
        could not be changed (warned)."""

        def drop_all(log: Change) -> int:
            count = len(log.records)
            if count:
                log.append(tombstone=Tombstone(clear=True, ts=self.clock()))
                self._tidy(log)
            return count

        self.refresh()
        scopes: tuple[Scope, ...] = ("session", "user") if scope is None else (scope,)
        counts = [self._apply(s, drop_all) for s in scopes if self._state[s].records]
        made = [count for count in counts if count is not None]
        return sum(made) if len(made) == len(counts) else None

    def _apply(self, scope: Scope, change: Callable[[Change], T]) -> T | None:
        """`change(log)` on the scope's file as it is now, under its lock; None when it cannot be
        made (warned once). A file that could not be read is never written."""
        log = self._logs[scope]
        if scope in self._failed:
            return None
        try:
            if isinstance(log, Journal) and self.store is not None:
                self.store.make_folders(self.caller)
            with log.change() as transaction:
                result = change(transaction)
                self._state[scope] = transaction.replay
                self._save_vectors(scope, transaction.records)
        except MemoryFileError as exc:
            self._warn(f"memory not saved: {exc}")
            return None
        return result

    def _compact(self, log: Change) -> None:
        raw = [r for r in log.records if r.kind == "turn"]
        if len(raw) <= self.config.compact_after_turns:
            self._tidy(log)
            return
        # The newest bucket's worth of turns stays raw: a follow-up needs them word for word.
        old = raw[: len(raw) - self.config.bucket_turns]
        summaries = compact(old, self.config.bucket_turns, self._vector)
        gone = {r.id for r in old}
        self._tidy(log, [*summaries, *(r for r in log.records if r.id not in gone)])

    def _tidy(self, log: Change, records: list[MemoryRecord] | None = None) -> None:
        """Rewrite the file without what is dead (or as `records`); the change already made stands
        when it cannot be rewritten (a full disk)."""
        if records is None and not log.needs_rewrite():
            return
        try:
            log.rewrite(records)
        except MemoryFileError as exc:
            self._warn(f"memory not compacted: {exc}")

    def _record(
        self, scope: Scope, kind: str, question: str, lead: str, entity: str, cited: dict[str, str], turn: int
    ) -> MemoryRecord:
        now = self.clock()
        return MemoryRecord(
            id=record_id(self.caller, self.name or "", kind, now, turn, question),
            scope=scope,
            kind=kind,  # type: ignore[arg-type]
            caller=self.caller,
            conversation=self.name or "" if scope == "session" else "",
            ts=now,
            turn=turn,
            question=question[:MAX_TEXT_CHARS],
            lead=lead[:MAX_TEXT_CHARS],
            entity=entity[:200],
            unit_ids=tuple(cited),
            unit_digests=tuple(cited.values()),
        )

    # warnings

    def _path(self, scope: Scope) -> str:
        log = self._logs[scope]
        return str(log.path) if isinstance(log, Journal) else "(memory)"

    def _unreadable(self, scopes: list[Scope], exc: MemoryFileError) -> None:
        for scope in scopes:
            self._failed[scope] = exc.reason
            self._state[scope] = Replay()
        self._warn(f"memory not read: {exc}")

    def _warn(self, line: str) -> None:
        if line not in self._reported:
            self._reported.add(line)
            self._warnings.append(line)

    # vectors: encoded once per record, kept beside the file

    def _load_vectors(self, scope: Scope) -> None:
        side = self._side(scope)
        missing = any(self._key(r) not in self._vectors for r in self._state[scope].records)
        if side is not None and missing and not side.current():
            self._vectors.update(side.read())

    def _save_vectors(self, scope: Scope, records: list[MemoryRecord]) -> None:
        side = self._side(scope)
        if side is None:
            return
        if not side.current():
            self._vectors.update(side.read())
        self._matrix(records)
        try:
            side.save({self._key(r): self._vectors[self._key(r)] for r in records})
        except OSError as exc:
            self._warn(f"memory vectors not saved ({exc.strerror or exc}): later asks encode them again")

    def _side(self, scope: Scope) -> vectors.SideFile | None:
        log = self._logs[scope]
        if not isinstance(log, Journal):
            return None
        if scope not in self._sides:
            path = vectors.side_path(log.path)
            self._sides[scope] = vectors.SideFile(path, self._header, 2 * self.config.max_records)
        return self._sides[scope]

    def _key(self, record: MemoryRecord) -> bytes:
        cached = self._keys.get(record.id)
        if cached is None or cached[0] != record.text:
            cached = self._keys[record.id] = (record.text, vectors.key(record))
        return cached[1]

    def _matrix(self, records: list[MemoryRecord]) -> np.ndarray:
        keys = [self._key(r) for r in records]
        missing = {k: r for k, r in zip(keys, records) if k not in self._vectors}
        if missing:
            encoded = encode_ngrams_batch(
                [tokenize(r.text) for r in missing.values()], self.hdc.seed, token_vectors(self.hdc)
            )
            self._vectors.update(zip(missing, encoded))
        return np.vstack([self._vectors[k] for k in keys]) if keys else np.zeros((0, WORDS), dtype=np.uint64)

    def _vector(self, record: MemoryRecord) -> np.ndarray:
        return self._matrix([record])[0]

    def _encode(self, text: str) -> np.ndarray:
        return encode_ngrams(tokenize(text), self.hdc.seed, token_vectors(self.hdc))
