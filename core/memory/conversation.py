"""One caller's memory for one conversation: its turns and summaries, plus the caller's durable notes.

A record is offered to a question only while every unit it cited is in the caller's current view
with the content digest the turn recorded (core/memory/cited.py), so a reload that withdraws or edits
a unit, or a caller who may not see it, withholds the record too (fail closed), and says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from core.config import HdcConfig, MemoryConfig
from core.memory.cited import CitedView, usable
from core.memory.compaction import compact
from core.memory.records import MAX_TEXT_CHARS, MemoryRecord, Scope, caller_digest, record_id
from core.memory.scoring import RecordArrays, ScoredRecord, score_records
from core.memory.store import MemoryStore
from core.retrieval.hdc import field_scores, noise_floor, token_vectors
from core.retrieval.hdc_vectors import encode_ngrams
from core.text import tokenize
from core.units import Caller


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
        self._vectors: dict[str, np.ndarray] = {}
        self._cached: tuple[tuple[str, ...], RecordArrays, np.ndarray] | None = None
        self.turns: list[MemoryRecord] = store.load(self.caller, name) if store and name else []
        self.notes: list[MemoryRecord] = store.load(self.caller, None) if store else []

    @property
    def records(self) -> list[MemoryRecord]:
        return [*self.turns, *self.notes]

    def vetted(self, view: CitedView | None) -> tuple[list[MemoryRecord], list[str]]:
        """The records that may be reused in `view` (None: a view of nothing), and a line for each
        one withheld (`turn 2 not used: orion::… has changed since`)."""
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
            matrix = np.vstack([self._vector(r) for r in records])
            self._cached = (ids, RecordArrays.of(records, self.config), matrix)
        return self._cached[1], self._cached[2]

    def remember(self, question: str, lead: str, entity: str, cited: dict[str, str]) -> MemoryRecord:
        """Record a finished turn (compacting old turns past `compactAfterTurns`) and save; `cited`:
        each cited unit's id and content digest (core/memory/cited.py)."""
        turn = 1 + max((r.turn for r in self.turns), default=0)
        record = self._record("session", "turn", question, lead, entity, cited, turn)
        self.turns.append(record)
        raw = [r for r in self.turns if r.kind == "turn"]
        if len(raw) > self.config.compact_after_turns:
            # The newest bucket's worth of turns stays raw: a follow-up needs them word for word.
            old = raw[: len(raw) - self.config.bucket_turns]
            summaries = compact(old, self.config.bucket_turns, self._vector)
            gone = {r.id for r in old}
            self.turns = sorted([*summaries, *(r for r in self.turns if r.id not in gone)], key=lambda r: (r.ts, r.id))
        self._save(self.name)
        return record

    def note(self, text: str, cited: dict[str, str] | None = None, entity: str = "") -> MemoryRecord:
        """A durable note in the user's memory (scope `user`), shared by all of this caller's conversations."""
        record = self._record("user", "note", text, "", entity, cited or {}, 0)
        self.notes.append(record)
        self._save(None)
        return record

    def forget(self, record_id_: str) -> bool:
        before = len(self.turns) + len(self.notes)
        self.turns = [r for r in self.turns if r.id != record_id_]
        self.notes = [r for r in self.notes if r.id != record_id_]
        if len(self.turns) + len(self.notes) == before:
            return False
        self._save(self.name)
        self._save(None)
        return True

    def clear(self, scope: Scope | None = None) -> int:
        """Forget every record of `scope` (both scopes when None); returns how many went."""
        count = 0
        if scope in (None, "session"):
            count += len(self.turns)
            self.turns = []
            self._save(self.name)
        if scope in (None, "user"):
            count += len(self.notes)
            self.notes = []
            self._save(None)
        return count

    def _record(self, scope: Scope, kind: str, question: str, lead: str, entity: str,
                cited: dict[str, str], turn: int) -> MemoryRecord:
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

    def _save(self, name: str | None) -> None:
        if self.store is None or (name is None and not self.notes and not self.store.path(self.caller, None).exists()):
            return
        if name is None:
            self.store.save(self.caller, None, self.notes)
        elif self.name:
            self.store.save(self.caller, name, self.turns)

    def _vector(self, record: MemoryRecord) -> np.ndarray:
        vector = self._vectors.get(record.id)
        if vector is None:
            vector = self._vectors[record.id] = self._encode(record.text)
        return vector

    def _encode(self, text: str) -> np.ndarray:
        return encode_ngrams(tokenize(text), self.hdc.seed, token_vectors(self.hdc))
