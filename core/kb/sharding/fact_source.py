"""One shard's ThinkingDB facts, in its part of a caller's view, answering the coordinator's
fetches: the facts a question's seeds may come from, then the facts each forward hop follows.

A fact comes back as the rows of every unit that states its triple (subject, relation and
object as written, confidence, unit id), so the coordinator keeps one fact per triple as one
process does. Symbols come back with where the view first names them (unit id, 0 subject / 1
object; a view is in id order) and that spelling, relations with the first unit stating a fact
with them: the coordinator numbers symbols and relations as the whole view would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.retrieval.rules import relation_key, symbol_key
from core.retrieval.thinkingdb import ThinkingDB
from core.retrieval.thinkingdb.arrays import gather
from core.retrieval.thinkingdb.seeds import facts_between, touching_symbols
from core.units import KnowledgeUnit

# Where a view first names a symbol: (unit id, 0 as subject / 1 as object).
Position = tuple[str, int]


@dataclass(frozen=True, slots=True)
class FactRow:
    """What ThinkingDB reads of a unit stating a fact."""

    id: str
    subject: str | None
    relation: str | None
    object: str | None
    confidence: float


@dataclass
class FactReply:
    """A shard's answer to one fetch."""

    rows: list[FactRow] = field(default_factory=list)
    symbols: dict[str, tuple[Position, str]] = field(default_factory=dict)  # key → first position, spelling
    relations: dict[str, str] = field(default_factory=dict)  # key → first unit id stating it

    def absorb(self, other: FactReply) -> None:
        """Merges another shard's reply: rows by unit id, each symbol's and relation's first place."""
        self.rows.extend(other.rows)
        for key, place in other.symbols.items():
            if key not in self.symbols or place[0] < self.symbols[key][0]:
                self.symbols[key] = place
        for key, unit_id in other.relations.items():
            if key not in self.relations or unit_id < self.relations[key]:
                self.relations[key] = unit_id


class FactSource:
    """The facts of one part of a view (a shard's, or the current-turn units'), with their rows."""

    def __init__(self, db: ThinkingDB, units: Iterable[KnowledgeUnit]):
        self.db = db
        self._rows: dict[int, list[FactRow]] = {}
        self._first: dict[str, tuple[Position, str]] = {}
        self._relations: dict[str, str] = {}
        floor = db.limits.min_confidence
        for unit in units:  # in id order, as a view holds them
            if unit.relation is None or unit.confidence < floor:
                continue  # ThinkingDB names no symbol of such a unit
            for side, name in enumerate((unit.subject or "", unit.object or "")):
                key = symbol_key(name)
                if key and key not in self._first:
                    self._first[key] = ((unit.id, side), name.strip())
            fact = db.fact_of(unit)
            if fact is not None:
                self._relations.setdefault(relation_key(unit.relation), unit.id)
                row = FactRow(unit.id, unit.subject, unit.relation, unit.object, unit.confidence)
                self._rows.setdefault(fact, []).append(row)

    def _key(self, symbol: int) -> str:
        return symbol_key(self.db.symbols[symbol])

    def _reply(self, facts: np.ndarray, keys: Iterable[str]) -> FactReply:
        rows = [row for fact in dict.fromkeys(facts.tolist()) for row in self._rows[fact]]
        return FactReply(rows=rows, symbols={k: self._first[k] for k in dict.fromkeys(keys) if k in self._first})

    def seeds(self, text: str, preferred: Sequence[str], keys: Sequence[str]) -> FactReply:
        """The facts that could make the question's seed cut here, where each symbol touching the
        question is first named, every relation, and where `keys` (rule constants) are named."""
        touching = touching_symbols(self.db, text, preferred)
        ix = self.db.indexes
        ends = [self._most_confident(groups, s) for groups in (ix.by_subject, ix.by_object) for s in touching.tolist()]
        facts = np.unique(np.concatenate([facts_between(self.db, touching), *ends]))
        touching_keys = [self._key(s) for s in touching.tolist()]
        reply = self._reply(facts, [*touching_keys, *keys])
        reply.relations = dict(self._relations)
        return reply

    def _most_confident(self, groups: tuple[np.ndarray, np.ndarray], symbol: int) -> np.ndarray:
        """A symbol's maxSeedFacts most confident facts here, and those tied with the last: the
        whole view may order tied facts otherwise (a triple stated earlier in another shard), but
        never puts a fact of lower confidence ahead of one of these."""
        order, starts = groups
        group = order[starts[symbol] : starts[symbol + 1]]
        limit = self.db.limits.max_seed_facts
        if len(group) <= limit:
            return group
        confidence = self.db.C[group]
        return group[: limit + int((confidence[limit:] == confidence[limit - 1]).sum())]

    def hop(self, subjects: Sequence[str], limit: int, keys: Sequence[str]) -> FactReply:
        """The followed facts (those a rule reads) of `subjects`, in their order, at most `limit`,
        and where `keys` are first named here."""
        ids = [self.db.symbol_id(name) for name in subjects]
        nodes = np.array([i for i in ids if i >= 0], dtype=np.int64)
        facts = gather(self.db.indexes.followed_by_subject, nodes)[:limit] if len(nodes) else nodes
        return self._reply(facts, keys)
