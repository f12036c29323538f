"""BM25 over several indexes at once, scored with their combined statistics (Lucene-style).

A question's context sentences become current-turn units. Rebuilding the view's index with them
would cost a full build per request; instead they get a small index of their own, and queries
score both parts with N, df and avgdl summed over the parts, reading only the postings of the
query's terms. Scores equal a from-scratch build over all the units (up to float rounding: the
per-field terms are added in another order).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import numpy as np

from core.infra.config import Bm25Config
from core.infra.picked import Picked
from core.retrieval.bm25.explain import Bm25Explanation, TermFieldContribution
from core.retrieval.bm25.fields import FIELDS
from core.retrieval.bm25.formula import field_totals, idf, length_norm, term_weight
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.layout import contributions
from core.units import Role

_ROLES: tuple[Role, ...] = tuple(Role)
_SCORED_KEPT = 4
_POSTINGS_KEPT = 256


class Bm25Parts:
    """The `Bm25Index` query API (top_k, scores, explain, matched_terms) over several parts.

    Rows are the parts' rows one after another. Nothing here costs Python work per unit, so
    building one per request (a question with context) stays cheap at a million units.
    """

    def __init__(self, parts: Sequence[Bm25Index | Bm25Slice], config: Bm25Config):
        self.parts = [part for part in parts if len(part)]
        self.config = config
        self._offsets = np.cumsum([0, *(len(part) for part in self.parts)])
        totals = [part.field_totals() for part in self.parts]
        present = sum((have for have, _ in totals), np.zeros(len(FIELDS), np.int64))
        total = sum((length for _, length in totals), np.zeros(len(FIELDS), np.int64))
        self._avgdl = np.where(present > 0, total / np.maximum(present, 1), 1.0)
        self._roles = np.concatenate([np.zeros(0, np.int8), *(part.role_rows() for part in self.parts)])
        self._weights = np.array([config.field_weights.get(f, 0.0) for f in FIELDS])
        # A request explains each of its candidates against the same query: score it once.
        self._scored: dict[tuple, np.ndarray] = {}
        self._postings: dict[tuple[int, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._dfs: dict[str, int] = {}

    def __len__(self) -> int:
        return int(self._offsets[-1])

    @property
    def unit_ids(self) -> list[str]:
        return [uid for part in self.parts for uid in part.unit_ids]

    def scores(self, query_tokens: Sequence[str], preferred_roles: Collection[Role]) -> np.ndarray:
        """Raw BM25 score of every row (role boost included), in part-then-row order."""
        key = (tuple(query_tokens), frozenset(preferred_roles))
        found = self._scored.get(key)
        if found is None:
            found = self._score(query_tokens, preferred_roles)
            if len(self._scored) >= _SCORED_KEPT:
                self._scored.pop(next(iter(self._scored)))
            self._scored[key] = found
            found.flags.writeable = False
        return found

    def _score(self, query_tokens: Sequence[str], preferred_roles: Collection[Role]) -> np.ndarray:
        rows, values = [], []
        for term, count in Counter(query_tokens).items():
            term_rows, contrib = self._term(term)
            rows.append(term_rows)
            values.append(contrib * count if count > 1 else contrib)
        raw = np.bincount(
            np.concatenate([np.zeros(0, np.int64), *rows]),
            weights=np.concatenate([np.zeros(0), *values]),
            minlength=len(self),
        )
        table = np.array([self.config.role_boost if r in frozenset(preferred_roles) else 1.0 for r in _ROLES])
        return raw * table[self._roles]

    def top_k(self, query_tokens: Sequence[str], preferred_roles: Collection[Role], k: int) -> list[tuple[str, float]]:
        """The k best units with score > 0, by score descending then unit id ascending."""
        if k <= 0:
            return []
        scores = self.scores(query_tokens, preferred_roles)
        rows = np.flatnonzero(scores > 0)
        if len(rows) > k:
            kth = np.partition(scores[rows], len(rows) - k)[len(rows) - k]
            rows = rows[scores[rows] >= kth]
        best = sorted(zip((-scores[rows]).tolist(), self._ids(rows)))[:k]
        return [(unit_id, -negated) for negated, unit_id in best]

    def explain(self, query_tokens: Sequence[str], unit_id: str, preferred_roles: Collection[Role]) -> Bm25Explanation:
        part_no, local = self._locate(unit_id)
        row = local + int(self._offsets[part_no])
        boost = self.config.role_boost if _ROLES[self._roles[row]] in preferred_roles else 1.0
        raw = float(self.scores(query_tokens, preferred_roles)[row])
        contributions = self.contributions(query_tokens, unit_id)
        return Bm25Explanation(unit_id=unit_id, contributions=contributions, role_boost=boost, raw=raw)

    def contributions(self, query_tokens: Sequence[str], unit_id: str) -> list[TermFieldContribution]:
        """`explain(...).contributions` alone (`Bm25Index.contributions`)."""
        part_no, local = self._locate(unit_id)
        part = self.parts[part_no]
        contributions = []
        for term, count in Counter(query_tokens).items():
            df = self._df(term)
            if df == 0:
                continue
            idf = self._idf(df)
            term_rows, fields, tfs = self._term_postings(part_no, term)
            # Postings are sorted by row: the unit's fields are one short run.
            lo, hi = np.searchsorted(term_rows, [local, local + 1])
            for f, tf in zip(fields[lo:hi].tolist(), tfs[lo:hi].tolist(), strict=True):
                dl = int(part.field_lengths()[f, local])
                norm = float(length_norm(dl, self._avgdl[f], self.config.k1, self.config.b))
                value = term_weight(float(self._weights[f]), idf, tf, norm, self.config.k1)
                contributions.append(
                    TermFieldContribution(
                        term=term,
                        field=FIELDS[f],
                        tf=tf,
                        df=df,
                        idf=idf,
                        field_weight=float(self._weights[f]),
                        dl=dl,
                        avgdl=float(self._avgdl[f]),
                        query_count=count,
                        contribution=value * count,
                    )
                )
        return contributions

    def contributions_of(
        self, query_tokens: Sequence[str], unit_ids: Sequence[str]
    ) -> list[list[TermFieldContribution]]:
        """`contributions` of each unit, in `unit_ids` order (`Bm25Index.contributions_of`)."""
        return [self.contributions(query_tokens, unit_id) for unit_id in unit_ids]

    def matched_terms(self, query_tokens: Sequence[str], unit_id: str) -> list[str]:
        part_no, local = self._locate(unit_id)
        return [term for term in dict.fromkeys(query_tokens) if local in self._term_postings(part_no, term)[0]]

    def _locate(self, unit_id: str) -> tuple[int, int]:
        for number, part in enumerate(self.parts):
            row = part.row_of(unit_id)
            if row is not None:
                return number, row
        raise KeyError(unit_id)

    def _ids(self, rows: np.ndarray) -> list[str]:
        part_of = np.searchsorted(self._offsets, rows, side="right") - 1
        local = rows - self._offsets[part_of]
        return [self.parts[p].unit_ids[r] for p, r in zip(part_of.tolist(), local.tolist())]

    def _term_postings(self, part_no: int, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A part's postings of a term, kept while a request explains its candidates."""
        key = (part_no, term)
        found = self._postings.get(key)
        if found is None:
            if len(self._postings) >= _POSTINGS_KEPT:
                self._postings.clear()
            found = self._postings[key] = self.parts[part_no].term_postings(term)
        return found

    def _df(self, term: str) -> int:
        """A term's document frequency over every part: each explained candidate asks for it
        again, and summing it walks every part's postings (200 parts at 1M units)."""
        found = self._dfs.get(term)
        if found is None:
            if len(self._dfs) >= _POSTINGS_KEPT:
                self._dfs.clear()
            found = self._dfs[term] = sum(part.doc_freq(term) for part in self.parts)
        return found

    def _idf(self, df: int) -> float:
        return idf(len(self), df)

    def _term(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """Rows holding `term` and their summed field contributions under the combined statistics."""
        df = self._df(term)
        if df == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        idf = self._idf(df)
        rows, values = [], []
        for part_no, (offset, part) in enumerate(zip(self._offsets, self.parts)):
            local, fields, tf = self._term_postings(part_no, term)
            if not len(local):
                continue
            norms = length_norm(part.field_lengths()[fields, local], self._avgdl[fields], self.config.k1, self.config.b)
            contrib = contributions(self._weights[fields], idf, tf, norms, self.config.k1)
            # A unit's fields summed first, then the query's terms, each scaled by its count, as
            # an index's (term, unit) pairs hold them (`pair_block`): float addition is not
            # associative, and adding fields and terms in one run differed from one index in the
            # last bit (a sharded score against one process's, with a merged index cached).
            starts = np.flatnonzero(np.concatenate(([True], local[1:] != local[:-1])))
            rows.append(local[starts] + offset)
            values.append(np.add.reduceat(contrib, starts))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0)
        return np.concatenate(rows), np.concatenate(values)


class Bm25Slice:
    """Some rows of an index, as one part of `Bm25Parts`: after a reload, the rows of the files a
    merged index still describes exactly (same content, same permitted rows), beside parts for
    the files that changed. Lucene keeps a segment and marks deleted documents; here the dropped
    rows are masked out of every statistic too (N, df, field lengths), and only raw postings
    (tf, field lengths) are read, never the index's own idf or norms, so the combined scores
    equal a from-scratch build over exactly the kept rows (tested to 1e-9)."""

    def __init__(self, index: Bm25Index, keep: np.ndarray):
        alive = np.zeros(len(index), dtype=bool)
        alive[keep] = True
        self._index = index
        # Sorted (postings stay sorted by row), by a mask rather than a sort: O(N), no log factor.
        self._keep = np.flatnonzero(alive)
        self._dropped = np.flatnonzero(~alive)
        self._local = np.full(len(index), -1, dtype=np.int64)
        self._local[self._keep] = np.arange(len(self._keep))
        self._lengths: np.ndarray | None = None
        self._totals: tuple[np.ndarray, np.ndarray] | None = None
        self.unit_ids = Picked(index.unit_ids, self._keep)

    def __len__(self) -> int:
        return len(self._keep)

    def field_lengths(self) -> np.ndarray:
        if self._lengths is None:
            self._lengths = self._index.field_lengths()[:, self._keep]
        return self._lengths

    def field_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """The index's totals less the dropped rows': a reload drops a file's worth of rows."""
        if self._totals is None:
            have, total = self._index.field_totals()
            dropped_have, dropped_total = field_totals(self._index.field_lengths()[:, self._dropped])
            self._totals = (have - dropped_have, total - dropped_total)
        return self._totals

    def role_rows(self) -> np.ndarray:
        return self._index.role_rows()[self._keep]

    def row_of(self, unit_id: str) -> int | None:
        row = self._index.row_of(unit_id)
        local = -1 if row is None else int(self._local[row])
        return None if local < 0 else local

    def term_postings(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows, fields, tf = self._index.term_postings(term)
        local = self._local[rows]
        kept = local >= 0
        return local[kept], fields[kept], tf[kept]

    def doc_freq(self, term: str) -> int:
        rows = self.term_postings(term)[0]
        # Postings are sorted by row, a unit's fields adjacent: count the distinct rows.
        return int(np.count_nonzero(np.diff(rows))) + 1 if len(rows) else 0
