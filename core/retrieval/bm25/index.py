"""Field-weighted BM25 over one permitted view (seed 000, DESIGN §6).

Field weights, idf and length normalisation do not depend on the query, so every field's
contribution is computed once at build time and folded into one term × unit matrix (CSR rows by
term, term_rows.py). A query is then a sum of a few rows whatever the field count (DESIGN §14).
The per-field postings (postings.py) are kept so that `explain` can show each term × field
contribution. The formula's parts (idf, length norm, a field's weight, average field lengths) are
in formula.py, the role boost in boosts.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from functools import partial
from itertools import count
from typing import TYPE_CHECKING

import numpy as np

from core.infra.config import Bm25Config
from core.retrieval.bm25 import prune_gate as bm25_prune_gate
from core.retrieval.bm25 import select as bm25_select
from core.retrieval.bm25.boosts import ROLES, RoleBoosts
from core.retrieval.bm25.explain import Bm25Explanation, TermFieldContribution
from core.retrieval.bm25.fields import FIELDS, field_tokens
from core.retrieval.bm25.formula import average_lengths, field_totals, idf, length_norm
from core.retrieval.bm25.layout import count_keys, document_frequencies, pair_rows
from core.retrieval.bm25.postings import FieldPostings
from core.retrieval.bm25.term_rows import TermRows
from core.retrieval.bm25.words import WordList, encode
from core.units import KnowledgeUnit, Role

if TYPE_CHECKING:
    from core.retrieval.bm25.prune import Pruner


class Bm25Index:
    """BM25 over a fixed list of units; rows of every array follow the order of `unit_ids`."""

    def __init__(
        self,
        unit_ids: list[str],
        roles: np.ndarray,
        vocab: dict[str, int] | list[str] | WordList,
        df: np.ndarray,
        idf: np.ndarray,
        matrix: TermRows,
        postings: FieldPostings,
        config: Bm25Config,
    ):
        self.unit_ids = unit_ids
        self.config = config
        self._rows: dict[str, int] | None = None
        self._roles = roles
        # A list of words (in term-id order) becomes the term -> id dict on first lookup: an index
        # read from the store only to be merged never needs it. A `WordList` (a per-file part's
        # stored words) is looked up in place and never becomes a dict (core/retrieval/bm25/words.py).
        self._terms = vocab if isinstance(vocab, dict | WordList) else None
        self._words = None if isinstance(vocab, dict | WordList) else vocab
        self._df = df
        self._idf = idf
        self._matrix = matrix
        self._postings = postings
        self._boosts = RoleBoosts(roles, config.role_boost)
        self._totals: tuple[np.ndarray, np.ndarray] | None = None
        self._pruner: Pruner | None = None  # block maxima for pruned top-k, made by the first query that needs them
        # Ties break on unit id; a precomputed rank of each id keeps string comparison out of queries.
        # Sorting is linear when the ids already come in id order (a view's do).
        self._id_rank = np.empty(len(unit_ids), dtype=np.int64)
        self._id_rank[sorted(range(len(unit_ids)), key=unit_ids.__getitem__)] = np.arange(len(unit_ids))

    @property
    def _vocab(self) -> dict[str, int] | WordList:
        if self._terms is None:
            self._terms = dict(zip(self._words or (), count()))
        return self._terms

    def words(self) -> list[str]:
        """The vocabulary in term-id order."""
        if isinstance(self._terms, WordList):
            return self._terms.words()
        return self._words if self._words is not None else list(self._terms or ())

    @property
    def _row(self) -> dict[str, int]:
        """Row of each unit id; built on first use (an index read from the store may never need it)."""
        if self._rows is None:
            self._rows = dict(zip(self.unit_ids, range(len(self.unit_ids))))
        return self._rows

    @classmethod
    def build(
        cls,
        units: Sequence[KnowledgeUnit],
        config: Bm25Config,
        tokens: tuple[dict[str, int], np.ndarray, np.ndarray] | None = None,
        columns: tuple[list[str], np.ndarray] | None = None,
    ) -> Bm25Index:
        """`tokens` (vocabulary, term ids, lengths [F, N]) are the units' stored tokens, if any;
        without them every unit is tokenised here. Either way N, df and avgdl are the units'.
        `columns` (ids, role codes in `Role` order) stand in for `units` read from a store, so
        no unit needs restoring; `tokens` must then be given."""
        ids, role_codes = (
            columns
            if columns is not None
            else ([u.id for u in units], np.array([ROLES.index(u.role) for u in units], dtype=np.int8))
        )
        # At 100k units each temporary is tens of MB, so each is dropped as soon as it is used.
        vocab, term_of, lengths = tokens if tokens is not None else _tokenize(units)
        keys, tf = count_keys(term_of, lengths, max(len(ids), 1), len(FIELDS))
        del term_of
        return cls._from_counts(ids, role_codes, vocab, keys, tf, lengths, config)

    def subset(self, rows: np.ndarray) -> Bm25Index:
        """The index over some of this index's units (by row, in result order), with their own
        N, df and avgdl: equal to `build` over those units' tokens, term numbering included
        (terms keep their order, those no given unit holds are dropped)."""
        if len(rows) == len(self) and bool(np.all(rows == np.arange(len(self)))):
            return self
        term, unit, field, tf = self._postings.of_rows(rows)
        words = self.words()
        present = np.zeros(len(words), dtype=bool)
        present[term] = True
        kept_words = list(map(words.__getitem__, np.flatnonzero(present).tolist()))
        # A part of a restricted view, looked up as a stored part is (no dict per part).
        vocab = WordList(encode(kept_words), len(kept_words))
        keys = ((np.cumsum(present) - 1)[term] * max(len(rows), 1) + unit) * len(FIELDS) + field
        if len(rows) > 1 and not bool(np.all(rows[1:] > rows[:-1])):
            order = np.argsort(keys)
            keys, tf = keys[order], tf[order]
        ids = [self.unit_ids[row] for row in rows.tolist()]
        return Bm25Index._from_counts(
            ids, self._roles[rows], vocab, keys, tf, self._postings.lengths[:, rows], self.config
        )

    @classmethod
    def _from_counts(
        cls,
        ids: list[str],
        role_codes,
        vocab: dict[str, int] | WordList,
        keys: np.ndarray,
        tf: np.ndarray,
        lengths: np.ndarray,
        config: Bm25Config,
    ) -> Bm25Index:
        """The index from sorted distinct (term, unit, field) keys, their tf and lengths [F, N]."""
        stride = max(len(ids), 1)
        # One (term, unit) pair per unit containing the term: df and the CSR row lengths at once.
        df = document_frequencies(keys, stride, len(FIELDS), len(vocab))
        idfs = idf(len(ids), df)
        avgdl = average_lengths(lengths)
        norms = length_norm(lengths, avgdl[:, None], config.k1, config.b)
        weights = np.array([config.field_weights.get(f, 0.0) for f in FIELDS])
        indices, data = pair_rows(keys, tf, df, idfs, weights, norms, config.k1, stride)
        return cls(
            unit_ids=ids,
            roles=np.asarray(role_codes, dtype=np.int8),
            vocab=vocab,
            df=df,
            idf=idfs,
            matrix=TermRows(np.concatenate(([0], np.cumsum(df))), indices, data),
            postings=FieldPostings(keys=keys, tf=tf, lengths=lengths, avgdl=avgdl, norms=norms),
            config=config,
        )

    def __len__(self) -> int:
        return len(self.unit_ids)

    ARRAYS = ("roles", "df", "idf", *TermRows.ARRAYS, *FieldPostings.ARRAYS)

    def to_arrays(self) -> tuple[list[str], list[str], dict[str, np.ndarray]]:
        """Unit ids, vocabulary (in term-id order) and every array: what `from_arrays` needs."""
        arrays = {"roles": self._roles, "df": self._df, "idf": self._idf}
        arrays |= self._matrix.as_arrays() | self._postings.as_arrays()
        return list(self.unit_ids), list(self.words()), arrays

    @classmethod
    def from_arrays(
        cls, unit_ids: list[str], words: list[str] | WordList, arrays: dict[str, np.ndarray], config: Bm25Config
    ) -> Bm25Index:
        """An index saved by `to_arrays` (with the same config); raises ValueError on a shape
        mismatch. A `WordList` is looked up in place, a list through a dict made on first lookup."""
        n, v = len(unit_ids), len(words)
        if any(arrays[name].shape != shape for name, shape in (("roles", (n,)), ("df", (v,)), ("idf", (v,)))):
            raise ValueError("BM25 arrays do not fit together")
        return cls(
            unit_ids=unit_ids,
            roles=arrays["roles"],
            vocab=words if isinstance(words, WordList) else list(words),
            df=arrays["df"],
            idf=arrays["idf"],
            matrix=TermRows.from_arrays(arrays, v),
            postings=FieldPostings.from_arrays(arrays, n),
            config=config,
        )

    def row_of(self, unit_id: str) -> int | None:
        return self._row.get(unit_id)

    def doc_freq(self, term: str) -> int:
        tid = self._vocab.get(term)
        return 0 if tid is None else int(self._df[tid])

    def postings(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (term, unit, field) key, sorted, and its tf (`FieldPostings`)."""
        return self._postings.keys, self._postings.tf

    def doc_freqs(self) -> np.ndarray:
        """df of every term, in term-id order."""
        return self._df

    def field_lengths(self) -> np.ndarray:
        """Token count of each field of each unit, [F, N]."""
        return self._postings.lengths

    def field_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per field: how many units have it and their summed length (what avgdl combines).
        Kept: a part outlives reloads that do not touch its file, and each reload combines them."""
        if self._totals is None:
            self._totals = field_totals(self._postings.lengths)
        return self._totals

    def role_rows(self) -> np.ndarray:
        """Each unit's role as an index into `Role`, in row order."""
        return self._roles

    def term_postings(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows, fields and tf of every (unit, field) holding `term`, by row then field."""
        tid = self._vocab.get(term)
        if tid is None:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32)
        return self._postings.of_term(tid)

    def scores(self, query_tokens: Sequence[str], preferred_roles: Collection[Role]) -> np.ndarray:
        """Raw BM25 score of every unit (role boost included), float64, in `unit_ids` order."""
        return self._matrix.raw(self._ids(self._query_terms(query_tokens)), len(self)) * self._boosts.per_unit(
            preferred_roles
        )

    def top_k(
        self, query_tokens: Sequence[str], preferred_roles: Collection[Role], k: int, *, kernel=None
    ) -> list[tuple[str, float]]:
        """The k best units with score > 0, by score descending then unit id ascending.

        Queries for few units against the index's size, over many postings, skip what cannot win (`bm25_prune`, exact);
        `kernel` forces that path with the given search, for tests."""
        if k <= 0:
            return []
        # The known terms with their counts, in order of first mention, as `_query_terms` gives
        # them, by id: a plain loop over a few tokens costs less than a Counter.
        vocab = self._vocab
        times: dict[int, int] = {}
        for token in query_tokens:
            tid = vocab.get(token)
            if tid is not None:
                times[tid] = times.get(tid, 0) + 1
        tids = np.fromiter(times, dtype=np.int64, count=len(times))
        counts = np.fromiter(times.values(), dtype=np.float64, count=len(times))
        if kernel is None and bm25_prune_gate.prunes(k, len(self)):
            kernel = bm25_prune_gate.kernel_for(partial(self._postings_of, tids))
        table, largest = self._boosts.table_and_max(preferred_roles)
        if kernel is not None:
            if self._pruner is None:
                self._pruner = bm25_prune_gate.pruner(*self._matrix.arrays(), self._roles, self._id_rank)
            rows, values = self._pruner.top_k(tids, counts, table, largest, k, kernel)
        elif self._postings_of(tids) * bm25_select.SPARSE_SHARE <= len(self):
            rows, raw = bm25_select.sparse_scores(*bm25_select.postings_of(*self._matrix.arrays(), tids, counts))
            rows, values = bm25_select.ranked(rows, raw * table[self._roles[rows]], k, self._id_rank)
        else:
            scores = self._matrix.raw(self._ids(self._query_terms(query_tokens)), len(self)) * self._boosts.per_unit(
                preferred_roles
            )
            rows = bm25_select.candidates(scores, k)
            rows, values = bm25_select.ranked(rows, scores[rows], k, self._id_rank)
        # One C loop over the rows: at 1M units each id is a cache miss, and these overlap.
        return list(zip(map(self.unit_ids.__getitem__, rows.tolist()), values.tolist()))

    def _postings_of(self, tids: np.ndarray) -> int:
        """How many postings the terms hold together."""
        return int(self._df[tids].sum())

    def explain(self, query_tokens: Sequence[str], unit_id: str, preferred_roles: Collection[Role]) -> Bm25Explanation:
        """Every term × field contribution to one unit's score, in query-term then field order."""
        row = self._row[unit_id]
        terms = self._query_terms(query_tokens)
        boost = float(self._boosts.per_unit(preferred_roles)[row])
        raw = self._matrix.raw_row(self._ids(terms), row) * boost
        return Bm25Explanation(
            unit_id=unit_id, contributions=self._contributions(terms, row), role_boost=boost, raw=raw
        )

    def contributions(self, query_tokens: Sequence[str], unit_id: str) -> list[TermFieldContribution]:
        """`explain(...).contributions` alone: a trace lists them for each of its top candidates,
        whose raw score it already has."""
        return self._contributions(self._query_terms(query_tokens), self._row[unit_id])

    def _contributions(self, terms: list[tuple[str, int]], row: int) -> list[TermFieldContribution]:
        return self._rows_contributions(terms, [row])[0]

    def contributions_of(
        self, query_tokens: Sequence[str], unit_ids: Sequence[str]
    ) -> list[list[TermFieldContribution]]:
        """`contributions` of each unit, in `unit_ids` order. A trace explains its top 40
        candidates: one search per term for all of them, not one per term and unit (each a
        binary search over every posting, memory-bound: ~230 per question at 100k units)."""
        return self._rows_contributions(self._query_terms(query_tokens), [self._row[u] for u in unit_ids])

    def _rows_contributions(self, terms: list[tuple[str, int]], rows: list[int]) -> list[list[TermFieldContribution]]:
        """Each row's term × field contributions, in query-term then field order."""
        if not terms or not rows:
            return [[] for _ in rows]
        tids = np.array([self._vocab[term] for term, _ in terms], dtype=np.int64)
        return self._postings.contributions(terms, tids, rows, self._df, self._idf, self.config)

    def matched_terms(self, query_tokens: Sequence[str], unit_id: str) -> list[str]:
        """Distinct query terms that occur in any field of the unit; empty means "no shared terms"."""
        row = self._row[unit_id]
        return [term for term, _ in self._query_terms(query_tokens) if self._matrix.holds(self._vocab[term], row)]

    def _query_terms(self, query_tokens: Sequence[str]) -> list[tuple[str, int]]:
        """Known query terms with how often the query repeats them (each repeat counts once more)."""
        return [(term, count) for term, count in Counter(query_tokens).items() if term in self._vocab]

    def _ids(self, terms: list[tuple[str, int]]) -> list[tuple[int, int]]:
        return [(self._vocab[term], times) for term, times in terms]


def _tokenize(units: Sequence[KnowledgeUnit]) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """Vocabulary, the term id of every token (units, then fields, in order) and lengths [F, N]."""
    flat: list[str] = []
    lengths: list[int] = []
    for unit in units:
        for tokens in field_tokens(unit):
            flat.extend(tokens)
            lengths.append(len(tokens))
    vocab = {term: i for i, term in enumerate(dict.fromkeys(flat))}
    term_of = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int32, count=len(flat))
    return vocab, term_of, np.array(lengths, dtype=np.int32).reshape(len(units), len(FIELDS)).T.copy()
