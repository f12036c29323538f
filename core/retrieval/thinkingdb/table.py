"""The local fact table of one query's fixpoint, as numpy columns.

It starts as the query's neighbourhood, and derived facts are appended per round with the best
proof of each (its rule and premises as local ids). Facts are only ever appended, so a premise's
matches by a round that has ended never change, and they are kept sorted for the joins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.retrieval.rules import MAX_PREMISES
from core.retrieval.thinkingdb.arrays import EMPTY, member
from core.retrieval.thinkingdb.seeds import named_bits

if TYPE_CHECKING:
    from core.retrieval.thinkingdb.facts import ThinkingDB
    from core.retrieval.thinkingdb.seeds import Neighbourhood

# What a premise's matches depend on: its constants, its relation, and whether one variable is at
# both ends; variable names do not matter, so "?x uses ?y" and "?y uses ?z" share their matches.
Shape = tuple[int, int, int, bool]


def shape(pattern: tuple[int, int, int]) -> Shape:
    s, relation, o = pattern
    return max(s, -1), relation, max(o, -1), s < 0 and s == o


class FactTable:
    """The neighbourhood's facts and the derived ones, one numpy column per field."""

    def __init__(self, db: ThinkingDB, hood: Neighbourhood):
        self.db = db
        self.n_relations = max(len(db.relations), 1)
        self.n_symbols = max(len(db.symbols), 1)
        self._by_relation: dict[int, tuple[np.ndarray, int]] = {}  # relation → (local ids, table length seen)
        self._sides: dict[tuple[Shape, int, str], tuple[np.ndarray, np.ndarray]] = {}
        self._load(hood)

    def _load(self, hood: Neighbourhood) -> None:
        """The local fact table starts as the neighbourhood; derived facts are appended per round."""
        db, neighbourhood = self.db, hood.facts
        self.ls, self.lr, self.lo = db.S[neighbourhood], db.R[neighbourhood], db.O[neighbourhood]
        self.conf = db.C[neighbourhood]
        self.steps = np.zeros(len(neighbourhood), dtype=np.int64)
        self.born = np.zeros(len(neighbourhood), dtype=np.int64)
        self.seeded = member(neighbourhood, np.sort(hood.seeds))
        self.origin = neighbourhood  # global fact id; -1 for derived facts
        self.rule_of = np.full(len(neighbourhood), -1, dtype=np.int64)
        self.premise_ids = np.full((len(neighbourhood), MAX_PREMISES), -1, dtype=np.int64)
        # Which of the question's named entities each fact's proof touches (one bit each).
        self.named = named_bits(hood.named, self.ls) | named_bits(hood.named, self.lo)
        self.base_keys = np.sort(self.keys(self.ls, self.lr, self.lo))

    def keys(self, s: np.ndarray, r: np.ndarray | int, o: np.ndarray) -> np.ndarray:
        return (s * self.n_relations + r) * self.n_symbols + o

    def matching(self, pattern: tuple[int, int, int], newest: int, within: slice = slice(None)) -> np.ndarray:
        """Local facts (optionally in an id range) matching a premise on its own and born by round
        `newest`, in table order."""
        s, relation, o = pattern
        # Facts are appended round by round, so `born` never decreases along the table and "born
        # by round `newest`" is an id prefix.
        end = int(self.born.searchsorted(newest, "right"))
        stop = end if within.stop is None else min(within.stop, end)
        ids = self._with_relation(relation, stop)
        found = ids[ids.searchsorted(within.start or 0) : ids.searchsorted(stop)]
        if s >= 0:
            found = found[self.ls[found] == s]
        if o >= 0:
            found = found[self.lo[found] == o]
        if s < 0 and s == o:
            found = found[self.ls[found] == self.lo[found]]
        return found

    def _with_relation(self, relation: int, stop: int) -> np.ndarray:
        """Local ids of the facts with `relation`, ascending, at least up to id `stop`; extended
        (never rescanned) as the table grows, so each premise's match is a slice instead of a pass
        over the table."""
        ids, seen = self._by_relation.get(relation, (EMPTY, 0))
        if seen < stop:
            ids = np.concatenate((ids, np.flatnonzero(self.lr[seen:] == relation) + seen))
            self._by_relation[relation] = (ids, len(self.lr))
        return ids

    def _sorted_side(self, pattern: tuple[int, int, int], newest: int, key: str) -> tuple[np.ndarray, np.ndarray]:
        """The facts matching a premise by a round `newest` that has ended, sorted by their join
        `key` column(s), and those keys. Facts are only ever appended, born in the round running,
        so the answer no longer changes: each (premise shape, round, key) is matched and sorted
        once per query instead of once per rule, delta and chunk."""
        cache_key = (shape(pattern), newest, key)
        found = self._sides.get(cache_key)
        if found is None:
            facts = self.matching(pattern, newest)
            if key == "pair":
                right = self.ls[facts] * self.n_symbols + self.lo[facts]
            elif key == "none":
                right = np.zeros(len(facts), dtype=np.int64)
            else:
                right = (self.ls if key == "s" else self.lo)[facts]
            order = right.argsort(kind="stable")
            found = self._sides[cache_key] = (facts[order], right[order])
        return found

    def _append(self, c: dict[str, np.ndarray], rows: np.ndarray, round_no: int) -> None:
        """New facts and better versions of old ones join the table; older versions stay, because
        the proofs built on them must keep pointing at the premises they were computed from."""
        grow = len(rows)
        self.ls = np.concatenate((self.ls, c["s"][rows]))
        self.lr = np.concatenate((self.lr, c["r"][rows]))
        self.lo = np.concatenate((self.lo, c["o"][rows]))
        self.conf = np.concatenate((self.conf, c["conf"][rows]))
        self.steps = np.concatenate((self.steps, c["steps"][rows]))
        self.born = np.concatenate((self.born, np.full(grow, round_no)))
        self.seeded = np.concatenate((self.seeded, c["seeded"][rows]))
        self.named = np.concatenate((self.named, c["named"][rows]))
        self.origin = np.concatenate((self.origin, np.full(grow, -1)))
        self.rule_of = np.concatenate((self.rule_of, c["rule"][rows]))
        self.premise_ids = np.vstack([self.premise_ids, c["premises"][rows]])
