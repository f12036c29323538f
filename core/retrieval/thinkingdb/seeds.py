"""Seed resolution and the neighbourhood a query's closure runs over.

Seed facts are those whose subject/object match the query (whole phrases before partial token
overlaps, then confidence). The neighbourhood walks FORWARD (subject → object) up to maxDepth hops
from the seed subjects and matched entities: following edges both ways reaches most of a hub-heavy
KB, and chain rules only need the forward direction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.retrieval.thinkingdb.arrays import EMPTY, counted, distinct, gather, member, slices, unique_in_order
from core.text.tokenizer import tokenize

if TYPE_CHECKING:
    from core.retrieval.thinkingdb.facts import ThinkingDB

_EDGE_PUNCT = "\"'`()[]{}<>.,;:!?"


@dataclass(frozen=True)
class Neighbourhood:
    """A query's seeds and the facts its closure may read."""

    seeds: np.ndarray  # global fact ids, best match first
    seed_set: frozenset[int]
    touching: np.ndarray  # every symbol sharing a token with the query, sorted
    named: np.ndarray  # symbols the question names in full (every token, or a plain name), sorted
    facts: np.ndarray  # followed facts within maxDepth forward hops: seed facts first, then by hop
    in_neighbourhood: np.ndarray  # bool per global fact
    capped: bool  # maxNeighbourhoodFacts stopped the walk early
    depth_cut: bool  # nodes reached on the last hop still had edges nobody followed


# Named entities a proof can connect are counted in one int64 bit mask per fact.
MAX_NAMED = 62


def named_bits(named: np.ndarray, symbols: np.ndarray) -> np.ndarray:
    """Per symbol, the bit of its position among the `named` symbols (0 when it is not named)."""
    if not len(named):
        return np.zeros(len(symbols), dtype=np.int64)
    at = np.minimum(named.searchsorted(symbols), len(named) - 1)
    return np.where(named[at] == symbols, np.left_shift(1, at), 0).astype(np.int64)


def find_neighbourhood(db: ThinkingDB, text: str, preferred: Sequence[str]) -> Neighbourhood:
    return _Search(db, text, preferred).run()


def touching_symbols(db: ThinkingDB, text: str, preferred: Sequence[str]) -> np.ndarray:
    """Every symbol sharing a token with the query (or named by its exact words), sorted."""
    search = _Search(db, text, preferred)
    search._symbol_scores()
    return search.touching


def facts_between(db: ThinkingDB, symbols: np.ndarray) -> np.ndarray:
    """The facts whose subject and object are both among `symbols`."""
    pairs = (symbols[:, None] * max(len(db.symbols), 1) + symbols[None, :]).ravel()
    keys = db.indexes.pair_keys
    return slices(db.indexes.by_pair, keys.searchsorted(pairs, "left"), keys.searchsorted(pairs, "right"))


def walk_front(db: ThinkingDB, text: str, preferred: Sequence[str], hops: int) -> tuple[np.ndarray, bool, int]:
    """The query's forward walk stopped after `hops` hops: the symbols its next hop would follow
    (in the walk's order), whether maxNeighbourhoodFacts stopped it, and the facts it holds."""
    search = _Search(db, text, preferred, hops)
    facts = search.run().facts
    return search.frontier, search.capped, len(facts)


def words(text: str) -> tuple[str, ...]:
    """The text's words as written, edge punctuation stripped (for names that are only stopwords)."""
    return tuple(w for w in (raw.strip(_EDGE_PUNCT) for raw in text.split()) if w)


def _contains(sequence: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(list(sequence[i : i + n]) == list(part) for i in range(len(sequence) - n + 1))


class _Search:
    def __init__(self, db: ThinkingDB, text: str, preferred: Sequence[str], hops: int | None = None):
        self.db = db
        self.limits = db.limits
        self.hops = db.limits.max_depth if hops is None else hops
        self.frontier: np.ndarray = EMPTY  # the symbols the next hop would follow
        self.ix = db.indexes
        self.sequences = [tokenize(text), *(tokenize(term) for term in preferred)]
        self.query_tokens = set().union(*self.sequences)
        self.words = [words(text), *(words(term) for term in preferred)]
        self.seeds: np.ndarray = EMPTY
        self.matched: np.ndarray = EMPTY  # best-matching symbols, sorted
        self.touching: np.ndarray = EMPTY
        self.named: np.ndarray = EMPTY
        self.in_neighbourhood = np.zeros(db.fact_count, dtype=bool)
        self.capped = self.depth_cut = False

    def run(self) -> Neighbourhood:
        self.seeds = self._resolve_seeds()
        facts = self._neighbourhood()
        return Neighbourhood(
            seeds=self.seeds,
            seed_set=frozenset(self.seeds.tolist()),
            touching=self.touching,
            named=self.named,
            facts=facts,
            in_neighbourhood=self.in_neighbourhood,
            capped=self.capped,
            depth_cut=self.depth_cut,
        )

    def _symbol_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """Matching symbols and scores: token overlap + coverage, +1 for a whole multiword phrase."""
        postings = [self.ix.token_symbols[t] for t in self.query_tokens if t in self.ix.token_symbols]
        symbols, overlap = counted(np.concatenate(postings or [EMPTY]))
        distinct = self.ix.distinct_tokens[symbols]
        scores = overlap + overlap / np.maximum(distinct, 1)
        for k in np.flatnonzero((overlap == distinct) & (distinct > 1)):
            tokens = self.ix.symbol_tokens[symbols[k]]
            scores[k] += any(_contains(seq, tokens) for seq in self.sequences)
        plain = sorted(set(self._plain_matches()))
        full = np.concatenate((overlap == distinct, np.ones(len(plain), dtype=bool)))
        symbols = np.concatenate((symbols, np.array(plain, dtype=np.int64)))
        scores = np.concatenate((scores, np.full(len(plain), 0.5)))
        self.touching = np.sort(symbols)
        best_named = np.lexsort((symbols[full], -scores[full]))[:MAX_NAMED]
        self.named = np.sort(symbols[full][best_named])
        return symbols, scores

    def _plain_matches(self) -> Iterable[int]:
        longest = max((len(k) for k in self.ix.plain_names), default=0)
        for sequence in self.words:
            for n in range(1, longest + 1):
                for i in range(len(sequence) - n + 1):
                    yield from self.ix.plain_names.get(sequence[i : i + n], ())

    def _resolve_seeds(self) -> np.ndarray:
        """Up to maxSeedFacts facts ranked by match score, then confidence, then KB order."""
        symbols, scores = self._symbol_scores()
        if not len(symbols):
            return EMPTY
        # Only the best-matching symbols' facts are scored: a partial match on a common token can
        # hit thousands of symbols, and the seed cut keeps just a handful of facts anyway.
        keep = np.lexsort((symbols, -scores))[: 4 * self.limits.max_seed_facts]
        symbols, scores = symbols[keep], scores[keep]
        by_id = symbols.argsort()
        symbols, scores = symbols[by_id], scores[by_id]
        candidates = self._seed_candidates(symbols)
        fact_scores = self._end_scores(self.db.S[candidates], symbols, scores)
        fact_scores += self._end_scores(self.db.O[candidates], symbols, scores)
        ranked = np.lexsort((candidates, -self.db.C[candidates], -fact_scores))
        self.matched = symbols
        return candidates[ranked[: self.limits.max_seed_facts]]

    def _seed_candidates(self, symbols: np.ndarray) -> np.ndarray:
        """Every fact that can make the seed cut: facts matching at both ends, and for one end only
        the maxSeedFacts most confident facts of each matching symbol (the groups are in that order),
        so a hub symbol costs no more than any other."""
        ix, limit = self.ix, self.limits.max_seed_facts
        both = facts_between(self.db, symbols)
        return distinct(
            np.concatenate((both, gather(ix.by_subject, symbols, limit), gather(ix.by_object, symbols, limit)))
        )

    @staticmethod
    def _end_scores(ends: np.ndarray, symbols: np.ndarray, scores: np.ndarray) -> np.ndarray:
        at = np.minimum(symbols.searchsorted(ends), len(symbols) - 1)
        return np.where(symbols[at] == ends, scores[at], 0.0)

    def starts(self) -> np.ndarray:
        """Where the forward walk starts: the seeds' subjects, and their objects the query names."""
        matched_objects = self.seeds[member(self.db.O[self.seeds], self.matched)]
        return unique_in_order(np.concatenate((self.db.S[self.seeds], self.db.O[matched_objects])))

    def _neighbourhood(self) -> np.ndarray:
        """Followed facts within maxDepth forward hops of the seeds: seed facts first, then by hop."""
        db, cap = self.db, self.limits.max_neighbourhood_facts
        self.in_neighbourhood = np.zeros(db.fact_count, dtype=bool)
        if not len(self.seeds):
            return EMPTY
        seeds = self.seeds[member(db.R[self.seeds], self.ix.read_relations)][:cap]
        self.in_neighbourhood[seeds] = True
        chunks, count = [seeds], len(seeds)
        starts = self.starts()
        visited = np.zeros(len(db.symbols), dtype=bool)
        visited[starts] = True
        frontier = self.frontier = starts
        for _ in range(self.hops):
            reached = gather(self.ix.followed_by_subject, frontier)
            facts = reached[~self.in_neighbourhood[reached]]
            capped = count + len(facts) > cap
            if capped:
                facts = facts[: cap - count]
                self.capped = True
            self.in_neighbourhood[facts] = True
            chunks.append(facts)
            count += len(facts)
            if capped:
                break
            objects = db.O[reached]  # seed facts are already in, but their objects are not yet walked
            frontier = self.frontier = unique_in_order(objects[~visited[objects]])
            visited[frontier] = True
            if not len(frontier):
                break
        else:
            # Nodes first reached on the last hop still have edges nobody followed.
            offsets = self.ix.followed_by_subject[1]
            self.depth_cut = bool((offsets[frontier + 1] - offsets[frontier]).sum())
        return np.concatenate(chunks)
