"""ThinkingDB (seed 004, DESIGN §9, §14): bounded positive Horn closure over unit triples.

`ThinkingDB.build` runs once per KB view: symbols and relations are interned to ints, facts live
in numpy arrays, and the indexes every query reads (facts by subject, by object and by
subject-object pair, the forward-walk CSR over facts some rule reads, and symbols by token) are
built there and never per query. A query
  1. resolves seed facts whose subject/object match the query (whole phrases before partial
     token overlaps, then confidence),
  2. walks FORWARD (subject → object) up to maxDepth hops from the seed subjects and matched
     entities; following edges both ways reaches most of a hub-heavy KB, and chain rules only
     need the forward direction,
  3. runs a semi-naive fixpoint over that neighbourhood under the limits, keeping the best proof
     of each derived fact; the joins by (relation, subject/object) run over this small local
     table, vectorised, rather than over a global per-relation index,
  4. ranks the original units by the best derivation they take part in, preferring derivations
     that answer the question (query terms at two different ends); bare seed facts count as 0-step proofs
     only when nothing was derived. No synthetic unit ever leaves this module.

Symbols compare by `core.rules.symbol_key` (case-insensitive, `_`/`-` as spaces, whitespace
collapsed, edge punctuation stripped); the first spelling seen is the one displayed. A symbol
whose name is only stopwords ("A", "IT") has no tokens, so it matches the query only by its exact,
case-sensitive spelling: "A" in "Why is A slow?" is a name, "a" in "find a tool" is an article.
One fact is kept per distinct triple, stated by its most confident unit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from core.rules import MAX_PREMISES, Limits, Rule, RuleSet, is_variable, relation_key, symbol_key
from core.text import tokenize
from core.units import KnowledgeUnit

StopReason = Literal["fixpoint", "max_derived_facts", "max_depth"]
SHOWN_BINDINGS = 8
_EDGE_PUNCT = "\"'`()[]{}<>.,;:!?"
_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Proof:
    """How a fact holds: a base fact of one unit (steps 0), or a rule over premise proofs.

    `confidence` is Π fact confidence × Π rule weight over the whole tree; `score` is the pathScore
    of this fact for the query that produced it.
    """

    subject: str
    relation: str
    object: str
    confidence: float
    score: float
    steps: int = 0
    rule: str | None = None
    weight: float | None = None
    premises: tuple[Proof, ...] = ()
    units: tuple[str, ...] = ()
    uses_seed: bool = False

    @property
    def fact(self) -> str:
        return f"{self.subject} {self.relation} {self.object}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "fact": self.fact,
            "score": self.score,
            "confidence": self.confidence,
            "steps": self.steps,
            "rule": self.rule,
            "weight": self.weight,
            "premises": [p.to_dict() for p in self.premises],
            "units": list(self.units),
        }


@dataclass
class RuleStats:
    fired: int = 0
    bindings: list[dict[str, str]] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    # For a rule that never fired: 0-based index of its first premise that no neighbourhood or
    # derived fact matches on its own (None when each matches but they never join).
    first_unmatched_premise: int | None = None


@dataclass(frozen=True)
class TdbResult:
    unit_scores: dict[str, float]
    proofs: list[Proof]
    best_proof_by_unit: dict[str, Proof]
    seeds: list[Proof]
    stop_reason: StopReason
    rounds: int
    derived_count: int
    rule_stats: dict[str, RuleStats]
    neighbourhood_size: int
    # Work caps that cut something: "maxNeighbourhoodFacts" (the forward walk stopped early) and
    # "maxJoinRows" (a hub join dropped its later rows).
    capped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _CompiledRule:
    rule: Rule
    # Terms are symbol ids (>= 0) or variable slots encoded as -1 - slot.
    premises: tuple[tuple[int, int, int], ...]
    head: tuple[int, int, int]
    variables: tuple[str, ...]
    last_round: int


@dataclass(frozen=True)
class FactIndexes:
    """Everything a query reads besides the fact arrays; built once by `ThinkingDB.build`."""

    # Seed resolution: all facts by subject and by object, most confident first in each group,
    # and fact ids sorted by subject * |symbols| + object (`pair_keys` holds the sorted keys).
    by_subject: tuple[np.ndarray, np.ndarray]
    by_object: tuple[np.ndarray, np.ndarray]
    by_pair: np.ndarray
    pair_keys: np.ndarray
    # Only facts whose relation some rule reads ("followed"): no other fact can be in a proof, so
    # the forward walk and the rule joins see just these.
    read_relations: np.ndarray
    followed_by_subject: tuple[np.ndarray, np.ndarray]
    # Symbols are tokenised from their normalised key, so "orion_cluster" has the tokens of
    # "Orion cluster" (the shared tokenizer would keep "orion_cluster" as one word).
    symbol_tokens: list[list[str]]
    token_symbols: dict[str, np.ndarray]
    distinct_tokens: np.ndarray  # per symbol
    plain_names: dict[tuple[str, ...], list[int]]  # stopword-only names by exact words


def _csr(
    size: int, keys: np.ndarray, subset: np.ndarray | None = None, rank: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Fact ids grouped by `keys`, ordered inside a group by `rank` then KB order, and the offset
    of each group."""
    ids = np.arange(len(keys), dtype=np.int64) if subset is None else subset
    order = ids[np.lexsort((ids, keys[ids]) if rank is None else (ids, rank[ids], keys[ids]))]
    return order, np.searchsorted(keys[order], np.arange(size + 1)).astype(np.int64)


def _gather(csr: tuple[np.ndarray, np.ndarray], nodes: np.ndarray, at_most: int | None = None) -> np.ndarray:
    """Concatenated CSR groups of `nodes` (each cut to `at_most`), in node order."""
    order, starts = csr
    lo, hi = starts[nodes], starts[nodes + 1]
    return _slices(order, lo, hi if at_most is None else np.minimum(hi, lo + at_most))


def _slices(order: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Concatenation of order[lo[k]:hi[k]] for every k, without a Python loop."""
    lengths = hi - lo
    total = int(lengths.sum())
    if not total:
        return _EMPTY
    shift = np.repeat(lo - (np.cumsum(lengths) - lengths), lengths)
    return order[shift + np.arange(total)]


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """`np.isin` for a sorted set: a binary search, much cheaper than isin's sort or hash."""
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values


def _unique_in_order(values: np.ndarray) -> np.ndarray:
    _, first = np.unique(values, return_index=True)
    return values[np.sort(first)]


def _chunks(start: int, end: int, first: int = 512) -> Iterable[slice]:
    """[start, end) in slices of doubling size."""
    size = first
    while start < end:
        yield slice(start, min(start + size, end))
        start, size = start + size, size * 2


def _contains(sequence: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(list(sequence[i : i + n]) == list(part) for i in range(len(sequence) - n + 1))


class ThinkingDB:
    """Facts of one KB view with persistent indexes; `query` never rebuilds them."""

    def __init__(self, ruleset: RuleSet):
        self.ruleset = ruleset
        self.limits: Limits = ruleset.limits
        self.symbols: list[str] = []
        self._symbol_ids: dict[str, int] = {}  # symbol_key → id
        self._spellings: dict[str, int] = {}  # as written → id, so each spelling is normalised once
        self.relations: list[str] = []
        self._relation_ids: dict[str, int] = {}
        self.unit_ids: list[str] = []  # per fact
        self._fact_of_unit: dict[str, int] = {}
        self._fact_of_triple: dict[tuple[int, int, int], int] = {}
        self._absent: dict[str, str] = {}  # unit id → why it has no fact here
        self._rules: list[_CompiledRule] = []
        self._premise_uses: dict[int, list[tuple[_CompiledRule, int]]] = {}
        self.S = self.R = self.O = _EMPTY
        self.C = np.zeros(0, dtype=np.float64)
        self.indexes: FactIndexes

    # ---- build -------------------------------------------------------------------------------

    @classmethod
    def build(cls, units: Iterable[KnowledgeUnit], ruleset: RuleSet) -> ThinkingDB:
        db = cls(ruleset)
        triples, confidences = db._collect(units)
        db._rules = [db._compile(rule) for rule in ruleset.rules]
        facts = np.array(triples, dtype=np.int64).reshape(-1, 3)
        db.S, db.R, db.O = (np.ascontiguousarray(facts[:, k]) for k in range(3))
        db.C = np.array(confidences, dtype=np.float64)
        db._premise_uses = db._premises_by_relation()
        db.indexes = _index_facts(db)
        return db

    def _symbol(self, name: str) -> int:
        """Id of a symbol spelling (-1 when nothing is left of it after normalising)."""
        found = self._spellings.get(name)
        if found is None:
            key = symbol_key(name)
            found = self._symbol_ids.get(key, -1) if key else -1
            if key and found < 0:
                found = self._symbol_ids[key] = len(self.symbols)
                self.symbols.append(name.strip())
            self._spellings[name] = found
        return found

    def _relation(self, name: str) -> int:
        """Id of a relation; spellings are remembered beside the normalised names."""
        found = self._relation_ids.get(name)
        if found is None:
            key = relation_key(name)
            found = self._relation_ids.get(key)
            if found is None:
                found = self._relation_ids[key] = len(self.relations)
                self.relations.append(key)
            self._relation_ids[name] = found
        return found

    def _triple(self, unit: KnowledgeUnit) -> tuple[int, int, int] | str:
        """The unit's fact as ids, or the reason it contributes none."""
        if unit.relation is None:
            return "unit has no symbolic fact"
        if unit.confidence < self.limits.min_confidence:
            return f"fact confidence {unit.confidence:g} is below minConfidence {self.limits.min_confidence:g}"
        subject, obj = self._symbol(unit.subject or ""), self._symbol(unit.object or "")
        if subject < 0 or obj < 0:
            return "the fact's subject or object has no name left after normalising"
        return subject, self._relation(unit.relation), obj

    def _collect(self, units: Iterable[KnowledgeUnit]) -> tuple[list[tuple[int, int, int]], list[float]]:
        """One fact per distinct triple, stated by its most confident unit (ties: the first)."""
        triples: list[tuple[int, int, int]] = []
        confidences: list[float] = []
        for unit in units:
            triple = self._triple(unit)
            if isinstance(triple, str):
                self._absent[unit.id] = triple
                continue
            known = self._fact_of_triple.setdefault(triple, len(triples))
            if known == len(triples):
                triples.append(triple)
                confidences.append(unit.confidence)
                self.unit_ids.append(unit.id)
                self._fact_of_unit[unit.id] = known
                continue
            loser, winner = unit.id, self.unit_ids[known]
            if unit.confidence > confidences[known]:
                loser, winner = winner, unit.id
                del self._fact_of_unit[loser]
                confidences[known], self.unit_ids[known] = unit.confidence, unit.id
                self._fact_of_unit[unit.id] = known
            self._absent[loser] = f"the same fact is stated with higher confidence by {winner}"
        return triples, confidences

    def _compile(self, rule: Rule) -> _CompiledRule:
        variables: list[str] = []

        def term(text: str) -> int:
            if not is_variable(text):
                return self._symbol(text)
            if text not in variables:
                variables.append(text)
            return -1 - variables.index(text)

        premises = tuple((term(p.s), self._relation(p.r), term(p.o)) for p in rule.when)
        head = (term(rule.then.s), self._relation(rule.then.r), term(rule.then.o))
        last_round = min(rule.max_depth or self.limits.max_depth, self.limits.max_depth)
        return _CompiledRule(rule, premises, head, tuple(variables), last_round)

    def _premises_by_relation(self) -> dict[int, list[tuple[_CompiledRule, int]]]:
        uses: dict[int, list[tuple[_CompiledRule, int]]] = {}
        for compiled in self._rules:
            for index, (_, relation, _) in enumerate(compiled.premises):
                uses.setdefault(relation, []).append((compiled, index))
        return uses

    # ---- queries -----------------------------------------------------------------------------

    @property
    def fact_count(self) -> int:
        return len(self.unit_ids)

    def query(self, query_text: str, preferred_terms: Sequence[str] | None = None) -> TdbResult:
        return _Query(self, query_text, preferred_terms or ()).run()

    def explain_absence(self, unit_id: str, query_text: str, preferred_terms: Sequence[str] | None = None) -> str:
        """The ThinkingDB lane's reason why `unit_id` got no score for this query."""
        if unit_id in self._absent:
            return self._absent[unit_id]
        fact = self._fact_of_unit.get(unit_id)
        if fact is None:
            return "unit is not in this view"
        return _Query(self, query_text, preferred_terms or ()).why_not(unit_id, fact)


def _index_facts(db: ThinkingDB) -> FactIndexes:
    n_symbols = len(db.symbols)
    read = np.array(sorted(db._premise_uses), dtype=np.int64)
    followed = np.flatnonzero(np.isin(db.R, read))
    symbol_tokens = [tokenize(symbol_key(name)) for name in db.symbols]
    token_lists = [sorted(set(tokens)) for tokens in symbol_tokens]
    pair_keys = db.S * max(n_symbols, 1) + db.O
    by_pair = np.argsort(pair_keys, kind="stable")
    return FactIndexes(
        by_subject=_csr(n_symbols, db.S, rank=-db.C),
        by_object=_csr(n_symbols, db.O, rank=-db.C),
        by_pair=by_pair,
        pair_keys=pair_keys[by_pair],
        read_relations=read,
        followed_by_subject=_csr(n_symbols, db.S, subset=followed),
        symbol_tokens=symbol_tokens,
        token_symbols=_token_index(token_lists),
        distinct_tokens=np.array([len(t) for t in token_lists], dtype=np.int64),
        plain_names=_plain_names(db.symbols, token_lists),
    )


def _token_index(token_lists: list[list[str]]) -> dict[str, np.ndarray]:
    postings: dict[str, list[int]] = {}
    for symbol, tokens in enumerate(token_lists):
        for token in tokens:
            postings.setdefault(token, []).append(symbol)
    return {token: np.array(symbols, dtype=np.int64) for token, symbols in postings.items()}


def _plain_names(names: list[str], token_lists: list[list[str]]) -> dict[tuple[str, ...], list[int]]:
    plain: dict[tuple[str, ...], list[int]] = {}
    for symbol, (name, tokens) in enumerate(zip(names, token_lists, strict=True)):
        if not tokens:
            plain.setdefault(_words(name), []).append(symbol)
    return plain


def _words(text: str) -> tuple[str, ...]:
    return tuple(w for w in (raw.strip(_EDGE_PUNCT) for raw in text.split()) if w)


@dataclass
class _Rows:
    """Partial rule-body matches: one row per combination of premise facts joined so far."""

    values: dict[int, np.ndarray]  # variable slot → bound symbol per row
    premises: dict[int, np.ndarray]  # premise index → local fact id per row

    def __len__(self) -> int:
        return len(next(iter(self.premises.values())))


@dataclass
class _Candidates:
    """Conclusions of one round, one row per rule-body match."""

    columns: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def add(self, **arrays: np.ndarray) -> None:
        for name, array in arrays.items():
            self.columns.setdefault(name, []).append(array)

    def merged(self) -> dict[str, np.ndarray]:
        return {name: np.concatenate(arrays) for name, arrays in self.columns.items()}


class _Query:
    """One query's seeds, neighbourhood and fixpoint; all per-query state lives here.

    The fixpoint works on a small local fact table (neighbourhood facts, then derived facts) held
    in numpy columns; each round joins rule bodies over it with sort + searchsorted, so a round
    costs a few dozen array operations instead of one Python call per fact.
    """

    def __init__(self, db: ThinkingDB, text: str, preferred: Sequence[str]):
        self.db = db
        self.limits = db.limits
        self.ix = db.indexes
        self.sequences = [tokenize(text), *(tokenize(term) for term in preferred)]
        self.query_tokens = set().union(*self.sequences)
        self.words = [_words(text), *(_words(term) for term in preferred)]
        self.n_relations = max(len(db.relations), 1)
        self.n_symbols = max(len(db.symbols), 1)
        self.seeds: np.ndarray = _EMPTY
        self.seed_set: set[int] = set()
        self.matched: np.ndarray = _EMPTY  # best-matching symbols, sorted
        self.touching: np.ndarray = _EMPTY  # every symbol sharing a token with the query
        self.in_neighbourhood = np.zeros(db.fact_count, dtype=bool)
        self.capped: list[str] = []
        self.depth_cut = self.stopped = False
        self.base_proofs: dict[int, Proof] = {}
        self.local_proofs: dict[int, Proof] = {}
        self.stats = {c.rule.id: RuleStats() for c in db._rules}
        self.current: dict[int, int] = {}  # derived fact key → local id of its best version
        self.n_sequences = len(db._rules) * MAX_PREMISES

    # ---- 1. seeds ----------------------------------------------------------------------------

    def _symbol_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """Matching symbols and scores: token overlap + coverage, +1 for a whole multiword phrase."""
        postings = [self.ix.token_symbols[t] for t in self.query_tokens if t in self.ix.token_symbols]
        symbols, overlap = np.unique(np.concatenate(postings or [_EMPTY]), return_counts=True)
        distinct = self.ix.distinct_tokens[symbols]
        scores = overlap + overlap / np.maximum(distinct, 1)
        for k in np.flatnonzero((overlap == distinct) & (distinct > 1)):
            tokens = self.ix.symbol_tokens[symbols[k]]
            scores[k] += any(_contains(seq, tokens) for seq in self.sequences)
        plain = sorted(set(self._plain_matches()))
        symbols, scores = np.r_[symbols, plain].astype(np.int64), np.r_[scores, np.full(len(plain), 0.5)]
        self.touching = np.sort(symbols)
        return symbols, scores

    def _plain_matches(self) -> Iterable[int]:
        longest = max((len(k) for k in self.ix.plain_names), default=0)
        for words in self.words:
            for n in range(1, longest + 1):
                for i in range(len(words) - n + 1):
                    yield from self.ix.plain_names.get(words[i : i + n], ())

    def _resolve_seeds(self) -> np.ndarray:
        """Up to maxSeedFacts facts ranked by match score, then confidence, then KB order."""
        symbols, scores = self._symbol_scores()
        if not len(symbols):
            return _EMPTY
        # Only the best-matching symbols' facts are scored: a partial match on a common token can
        # hit thousands of symbols, and the seed cut keeps just a handful of facts anyway.
        keep = np.lexsort((symbols, -scores))[: 4 * self.limits.max_seed_facts]
        symbols, scores = symbols[keep], scores[keep]
        by_id = np.argsort(symbols)
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
        pairs = (symbols[:, None] * max(len(self.db.symbols), 1) + symbols[None, :]).ravel()
        lo, hi = np.searchsorted(ix.pair_keys, pairs, "left"), np.searchsorted(ix.pair_keys, pairs, "right")
        both = _slices(ix.by_pair, lo, hi)
        return np.unique(np.r_[both, _gather(ix.by_subject, symbols, limit), _gather(ix.by_object, symbols, limit)])

    @staticmethod
    def _end_scores(ends: np.ndarray, symbols: np.ndarray, scores: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(symbols, ends), len(symbols) - 1)
        return np.where(symbols[at] == ends, scores[at], 0.0)

    # ---- 2. neighbourhood --------------------------------------------------------------------

    def _neighbourhood(self) -> np.ndarray:
        """Followed facts within maxDepth forward hops of the seeds: seed facts first, then by hop."""
        db, cap = self.db, self.limits.max_neighbourhood_facts
        self.in_neighbourhood = np.zeros(db.fact_count, dtype=bool)
        if not len(self.seeds):
            return _EMPTY
        seeds = self.seeds[_member(db.R[self.seeds], self.ix.read_relations)][:cap]
        self.in_neighbourhood[seeds] = True
        chunks, count = [seeds], len(seeds)
        matched_objects = self.seeds[_member(db.O[self.seeds], self.matched)]
        starts = _unique_in_order(np.r_[db.S[self.seeds], db.O[matched_objects]])
        visited = np.zeros(len(db.symbols), dtype=bool)
        visited[starts] = True
        frontier = starts
        for _ in range(self.limits.max_depth):
            reached = _gather(self.ix.followed_by_subject, frontier)
            facts = reached[~self.in_neighbourhood[reached]]
            capped = count + len(facts) > cap
            if capped:
                facts = facts[: cap - count]
                self.capped.append("maxNeighbourhoodFacts")
            self.in_neighbourhood[facts] = True
            chunks.append(facts)
            count += len(facts)
            if capped:
                break
            objects = db.O[reached]  # seed facts are already in, but their objects are not yet walked
            frontier = _unique_in_order(objects[~visited[objects]])
            visited[frontier] = True
            if not len(frontier):
                break
        else:
            # Nodes first reached on the last hop still have edges nobody followed.
            offsets = self.ix.followed_by_subject[1]
            self.depth_cut = bool((offsets[frontier + 1] - offsets[frontier]).sum())
        return np.concatenate(chunks)

    # ---- 3. fixpoint -------------------------------------------------------------------------

    def _load(self, neighbourhood: np.ndarray) -> None:
        """The local fact table starts as the neighbourhood; derived facts are appended per round."""
        db = self.db
        self.ls, self.lr, self.lo = db.S[neighbourhood], db.R[neighbourhood], db.O[neighbourhood]
        self.conf = db.C[neighbourhood]
        self.steps = np.zeros(len(neighbourhood), dtype=np.int64)
        self.born = np.zeros(len(neighbourhood), dtype=np.int64)
        self.seeded = _member(neighbourhood, np.sort(self.seeds))
        self.origin = neighbourhood  # global fact id; -1 for derived facts
        self.rule_of = np.full(len(neighbourhood), -1, dtype=np.int64)
        self.premise_ids = np.full((len(neighbourhood), MAX_PREMISES), -1, dtype=np.int64)
        self.base_keys = np.sort(self._keys(self.ls, self.lr, self.lo))

    def _keys(self, s: np.ndarray, r: np.ndarray | int, o: np.ndarray) -> np.ndarray:
        return (s * self.n_relations + r) * self.n_symbols + o

    def _matching(self, pattern: tuple[int, int, int], newest: int, within: slice = slice(None)) -> np.ndarray:
        """Local facts (optionally in an id range) matching a premise on its own and born by round
        `newest`, in table order."""
        s, relation, o = pattern
        ls, lo = self.ls[within], self.lo[within]
        mask = (self.lr[within] == relation) & (self.born[within] <= newest)
        if s >= 0:
            mask &= ls == s
        if o >= 0:
            mask &= lo == o
        if s < 0 and s == o:
            mask &= ls == lo
        return np.flatnonzero(mask) + (within.start or 0)

    def _fixpoint(self) -> tuple[int, bool]:
        """Semi-naive rounds; returns the rounds run and whether the last one left new facts.

        Each round's delta (the facts born in the round before, a contiguous id range) drives the
        joins in growing chunks, nearest facts first: on a dense neighbourhood the first chunk
        often fills maxDerivedFacts, and the rest of the delta is never joined.
        """
        delta_start, delta_end, rounds = 0, len(self.ls), 0
        for round_no in range(1, self.limits.max_depth + 1):
            rounds, added = round_no, False
            for chunk in _chunks(delta_start, delta_end):
                candidates = _Candidates()
                for rule_index, compiled in enumerate(self.db._rules):
                    if round_no > compiled.last_round:
                        continue
                    # Round 1's delta is every base fact: nothing older can fill earlier premises.
                    for delta_index in range(1 if round_no == 1 else len(compiled.premises)):
                        self._match_body(rule_index, compiled, delta_index, round_no, chunk, candidates)
                added |= bool(candidates.columns) and self._accept(candidates.merged(), round_no)
                if self.stopped:
                    return rounds, False
            if not added:
                return rounds, False
            delta_start, delta_end = delta_end, len(self.ls)
        return rounds, True

    def _match_body(
        self,
        rule_index: int,
        compiled: _CompiledRule,
        delta_index: int,
        round_no: int,
        chunk: slice,
        out: _Candidates,
    ) -> None:
        pattern = compiled.premises[delta_index]
        drivers = self._matching(pattern, round_no - 1, chunk)
        if not len(drivers):
            return
        rows = _Rows({}, {delta_index: drivers})
        self._bind_new(rows, pattern, drivers)
        for j, premise in enumerate(compiled.premises):
            if j == delta_index:
                continue
            # Semi-naive: earlier premises take facts older than the delta, later ones anything
            # known before this round, so each combination is joined exactly once.
            newest = round_no - 2 if j < delta_index else round_no - 1
            rows = self._join(rows, premise, j, self._matching(premise, newest))
            if not len(rows):
                return
        self._conclude(rule_index, compiled, delta_index, rows, out)

    def _bind_new(self, rows: _Rows, pattern: tuple[int, int, int], facts: np.ndarray) -> None:
        s, _, o = pattern
        if s < 0 and -1 - s not in rows.values:
            rows.values[-1 - s] = self.ls[facts]
        if o < 0 and -1 - o not in rows.values:
            rows.values[-1 - o] = self.lo[facts]

    def _join(self, rows: _Rows, pattern: tuple[int, int, int], j: int, facts: np.ndarray) -> _Rows:
        """Extend every row with each fact matching premise `j` on the variables already bound."""
        s, _, o = pattern
        bound_s, bound_o = s < 0 and -1 - s in rows.values, o < 0 and -1 - o in rows.values
        if bound_s and bound_o and s != o:
            left = rows.values[-1 - s] * self.n_symbols + rows.values[-1 - o]
            right = self.ls[facts] * self.n_symbols + self.lo[facts]
        elif bound_s or bound_o:
            left = rows.values[-1 - s] if bound_s else rows.values[-1 - o]
            right = self.ls[facts] if bound_s else self.lo[facts]
        else:
            left, right = np.zeros(len(rows), dtype=np.int64), np.zeros(len(facts), dtype=np.int64)
        order = np.argsort(right, kind="stable")
        sorted_right = right[order]
        first = np.searchsorted(sorted_right, left, "left")
        counts = self._within_budget(np.searchsorted(sorted_right, left, "right") - first)
        row_of = np.repeat(np.arange(len(left)), counts)
        within = np.arange(len(row_of)) - np.repeat(np.cumsum(counts) - counts, counts)
        picked = facts[order[first[row_of] + within]]
        joined = _Rows(
            {slot: v[row_of] for slot, v in rows.values.items()},
            {k: v[row_of] for k, v in rows.premises.items()} | {j: picked},
        )
        self._bind_new(joined, pattern, picked)
        return joined

    def _within_budget(self, counts: np.ndarray) -> np.ndarray:
        """Drop the rows past maxJoinRows (later drivers first), so one hub cannot blow up a join."""
        budget = self.limits.max_join_rows
        if counts.sum() <= budget:
            return counts
        if "maxJoinRows" not in self.capped:
            self.capped.append("maxJoinRows")
        return np.where(np.cumsum(counts) <= budget, counts, 0)

    def _conclude(
        self, rule_index: int, compiled: _CompiledRule, delta_index: int, rows: _Rows, out: _Candidates
    ) -> None:
        stats, n = self.stats[compiled.rule.id], len(rows)
        stats.fired += n
        for row in range(min(n, SHOWN_BINDINGS - len(stats.bindings))):
            stats.bindings.append(
                {v: self.db.symbols[rows.values[k][row]] for k, v in enumerate(compiled.variables)}
            )
        premises = np.full((n, MAX_PREMISES), -1, dtype=np.int64)
        for k, ids in rows.premises.items():
            premises[:, k] = ids
        used = premises[:, : len(compiled.premises)]
        hs, relation, ho = compiled.head
        subjects = np.full(n, hs) if hs >= 0 else rows.values[-1 - hs]
        objects = np.full(n, ho) if ho >= 0 else rows.values[-1 - ho]
        out.add(
            key=self._keys(subjects, relation, objects),
            s=subjects,
            r=np.full(n, relation),
            o=objects,
            conf=self.conf[used].prod(axis=1) * compiled.rule.weight,
            steps=1 + self.steps[used].sum(axis=1),
            seeded=self.seeded[used].any(axis=1),
            rule=np.full(n, rule_index),
            premises=premises,
            # Discovery order: nearest driving fact first, then rule, delta premise and row.
            discovery=(rows.premises[delta_index] * self.n_sequences + rule_index * MAX_PREMISES + delta_index)
            * (self.limits.max_join_rows + 1)
            + np.arange(n),
        )

    def _accept(self, c: dict[str, np.ndarray], round_no: int) -> bool:
        """Add this round's new facts (in discovery order, up to maxDerivedFacts) and better proofs
        of facts derived earlier; returns whether anything was added."""
        fresh = np.flatnonzero(~_member(c["key"], self.base_keys))
        if not len(fresh):
            return False
        keys, discovery = c["key"][fresh], c["discovery"][fresh]
        # Grouped by fact, best proof first (highest confidence, then fewest steps, then earliest).
        order = np.lexsort((discovery, c["steps"][fresh], -c["conf"][fresh], keys))
        starts = np.flatnonzero(np.r_[True, keys[order][1:] != keys[order][:-1]])
        first_seen = np.minimum.reduceat(discovery[order], starts)
        best = fresh[order[starts][np.argsort(first_seen)]]
        keys = c["key"]
        accepted: list[int] = []
        for index in best.tolist():
            key = int(keys[index])
            known = self.current.get(key)
            if known is not None and not self._improves(c, index, known):
                continue
            if known is None:
                if len(self.current) >= self.limits.max_derived_facts:
                    self.stopped = True
                    break
                rule_id = self.db._rules[c["rule"][index]].rule.id
                self.stats[rule_id].derived.append(self._fact_text(c["s"][index], c["r"][index], c["o"][index]))
            self.current[key] = len(self.ls) + len(accepted)
            accepted.append(index)
        if accepted:
            self._append(c, np.array(accepted, dtype=np.int64), round_no)
        return bool(accepted)

    def _improves(self, c: dict[str, np.ndarray], index: int, known: int) -> bool:
        """Higher confidence wins; at equal confidence, fewer steps."""
        confidence, old = c["conf"][index], self.conf[known]
        return bool(confidence > old or (confidence == old and c["steps"][index] < self.steps[known]))

    def _append(self, c: dict[str, np.ndarray], rows: np.ndarray, round_no: int) -> None:
        """New facts and better versions of old ones join the table; older versions stay, because
        the proofs built on them must keep pointing at the premises they were computed from."""
        grow = len(rows)
        self.ls = np.r_[self.ls, c["s"][rows]]
        self.lr = np.r_[self.lr, c["r"][rows]]
        self.lo = np.r_[self.lo, c["o"][rows]]
        self.conf = np.r_[self.conf, c["conf"][rows]]
        self.steps = np.r_[self.steps, c["steps"][rows]]
        self.born = np.r_[self.born, np.full(grow, round_no)]
        self.seeded = np.r_[self.seeded, c["seeded"][rows]]
        self.origin = np.r_[self.origin, np.full(grow, -1)]
        self.rule_of = np.r_[self.rule_of, c["rule"][rows]]
        self.premise_ids = np.vstack([self.premise_ids, c["premises"][rows]])

    def _fact_text(self, s: int, r: int, o: int) -> str:
        return f"{self.db.symbols[s]} {self.db.relations[r]} {self.db.symbols[o]}"

    # ---- 4. proofs and ranking ---------------------------------------------------------------

    def _scores(
        self,
        confidence: np.ndarray,
        steps: np.ndarray | int,
        subjects: np.ndarray,
        objects: np.ndarray,
        seeded: np.ndarray,
    ) -> np.ndarray:
        """pathScore = confidence × 1/(1 + distancePenalty·steps) × goalBonus (subject or object
        shares a token with the query) × seedBonus (the proof uses a seed fact)."""
        limits = self.limits
        goal = _member(subjects, self.touching) | _member(objects, self.touching)
        score = confidence / (1 + limits.distance_penalty * steps)
        return score * np.where(goal, limits.goal_bonus, 1.0) * np.where(seeded, limits.seed_bonus, 1.0)

    def _base_proof(self, fact: int, score: float) -> Proof:
        found = self.base_proofs.get(fact)
        if found is None:
            db = self.db
            found = Proof(
                subject=db.symbols[db.S[fact]],
                relation=db.relations[db.R[fact]],
                object=db.symbols[db.O[fact]],
                confidence=float(db.C[fact]),
                score=score,
                units=(db.unit_ids[fact],),
                uses_seed=fact in self.seed_set,
            )
            self.base_proofs[fact] = found
        return found

    def _proof(self, local: int) -> Proof:
        """The proof tree of a local fact, rebuilt from the premise ids recorded when it was derived."""
        score = float(self.scores[local])
        if self.origin[local] >= 0:
            return self._base_proof(int(self.origin[local]), score)
        found = self.local_proofs.get(local)
        if found is None:
            premises = tuple(self._proof(int(p)) for p in self.premise_ids[local] if p >= 0)
            rule = self.db._rules[self.rule_of[local]].rule
            found = Proof(
                subject=self.db.symbols[self.ls[local]],
                relation=self.db.relations[self.lr[local]],
                object=self.db.symbols[self.lo[local]],
                confidence=float(self.conf[local]),
                score=score,
                steps=int(self.steps[local]),
                rule=rule.id,
                weight=rule.weight,
                premises=premises,
                units=tuple(dict.fromkeys(u for p in premises for u in p.units)),
                uses_seed=bool(self.seeded[local]),
            )
            self.local_proofs[local] = found
        return found

    def _ranked(self) -> tuple[list[Proof], list[Proof]]:
        """Seed proofs, and the best maxProofs proofs that rank units; Proof objects are only
        built for candidates that can make the cut.

        Units are ranked by the derivations they take part in (seed 004: "the best proof path"),
        and goal-directed: when some derived fact names query terms at two different ends, it answers the
        question asked, and only such proofs rank units. The distance penalty otherwise lets every
        shorter derivation from the same seed outscore the chain that answers the question, and
        crowd it out of maxResults. Bare seed facts rank only when nothing was derived; BM25
        already finds the units that match the query directly.
        """
        db, seeds = self.db, self.seeds
        self.scores = self._scores(self.conf, self.steps, self.ls, self.lo, self.seeded)
        seed_scores = self._scores(db.C[seeds], 0, db.S[seeds], db.O[seeds], np.ones(len(seeds), dtype=bool))
        seed_proofs = [self._base_proof(f, s) for f, s in zip(seeds.tolist(), seed_scores.tolist(), strict=True)]
        derived = np.fromiter(self.current.values(), dtype=np.int64, count=len(self.current))
        if not len(derived):
            return seed_proofs, sorted(seed_proofs, key=_rank_key)[: self.limits.max_proofs]
        subjects, objects = self.ls[derived], self.lo[derived]
        answers = _member(subjects, self.touching) & _member(objects, self.touching) & (subjects != objects)
        if answers.any():
            derived = derived[answers]
        scores, steps = self.scores[derived], self.steps[derived]
        order = np.lexsort((steps, -scores))
        keep = np.ones(len(scores), dtype=bool)
        if len(order) > self.limits.max_proofs:
            last = order[self.limits.max_proofs - 1]  # ties with the last kept one stay candidates
            keep = (scores > scores[last]) | ((scores == scores[last]) & (steps <= steps[last]))
        candidates = [self._proof(int(local)) for local in derived[keep]]
        return seed_proofs, sorted(candidates, key=_rank_key)[: self.limits.max_proofs]

    def run(self) -> TdbResult:
        self.seeds = self._resolve_seeds()
        self.seed_set = set(self.seeds.tolist())
        neighbourhood = self._neighbourhood()
        self._load(neighbourhood)
        rounds, pending = self._fixpoint() if len(neighbourhood) else (0, False)
        stop: StopReason = "fixpoint"
        if self.stopped:
            stop = "max_derived_facts"
        elif pending or self.depth_cut:
            stop = "max_depth"
        seeds, ranked = self._ranked()
        best: dict[str, Proof] = {}
        for proof in ranked:
            for unit in proof.units:
                best.setdefault(unit, proof)
        for compiled in self.db._rules:
            stats = self.stats[compiled.rule.id]
            if not stats.fired:
                stats.first_unmatched_premise = self._first_unmatched(compiled)
        return TdbResult(
            unit_scores={unit: proof.score for unit, proof in best.items()},
            proofs=ranked,
            best_proof_by_unit=best,
            seeds=seeds,
            stop_reason=stop,
            rounds=rounds,
            derived_count=len(self.current),
            rule_stats=self.stats,
            neighbourhood_size=len(neighbourhood),
            capped=tuple(self.capped),
        )

    def _first_unmatched(self, compiled: _CompiledRule) -> int | None:
        """First premise that no neighbourhood or derived fact matches even on its own."""
        for index, pattern in enumerate(compiled.premises):
            if not len(self._matching(pattern, self.limits.max_depth)):
                return index
        return None

    # ---- why not -----------------------------------------------------------------------------

    def why_not(self, unit_id: str, fact: int) -> str:
        db, limits = self.db, self.limits
        result = self.run()
        if unit_id in result.unit_scores:
            return f"not absent: scored {result.unit_scores[unit_id]:.3f} via {result.best_proof_by_unit[unit_id].fact}"
        if not len(self.seeds):
            return "no seed matched the query"
        if fact in self.seed_set or any(unit_id in self._proof(local).units for local in self.current.values()):
            return f"its proofs ranked below the maxProofs cut ({limits.max_proofs})"
        relation = int(db.R[fact])
        if relation not in db._premise_uses:
            return f"the fact matched no query term and no rule reads '{db.relations[relation]}'"
        if not self.in_neighbourhood[fact]:
            if "maxNeighbourhoodFacts" in self.capped:
                return f"the neighbourhood was capped at maxNeighbourhoodFacts ({limits.max_neighbourhood_facts})"
            return f"fact not reachable within maxDepth {limits.max_depth} hops of the seeds"
        for compiled, index in db._premise_uses[relation]:
            binding: dict[int, int] = {}
            s, _, o = compiled.premises[index]
            if not (_bind(s, int(db.S[fact]), binding) and _bind(o, int(db.O[fact]), binding)):
                continue
            gap = self._gap(compiled, binding, [k for k in range(len(compiled.premises)) if k != index])
            if gap is not None:
                pattern = self._pattern(compiled, compiled.premises[gap], binding)
                return f"rule {compiled.rule.id} would have fired but premise {gap + 1} ({pattern}) had no match"
        if result.stop_reason == "max_derived_facts":
            return f"derivation stopped at maxDerivedFacts ({limits.max_derived_facts}) before a proof used it"
        return f"no rule can use it within maxDepth {limits.max_depth} rounds"

    def _gap(self, compiled: _CompiledRule, binding: dict[int, int], remaining: list[int]) -> int | None:
        """The deepest of the `remaining` premises that no fact matches under `binding`, or None
        when they all match together."""
        if not remaining:
            return None
        j, rest = remaining[0], remaining[1:]
        s, relation, o = compiled.premises[j]
        grounded = (binding.get(-1 - s, s) if s < 0 else s, relation, binding.get(-1 - o, o) if o < 0 else o)
        deepest = j
        for local in self._matching(grounded, self.limits.max_depth).tolist():
            extended = dict(binding)
            if _bind(s, int(self.ls[local]), extended) and _bind(o, int(self.lo[local]), extended):
                gap = self._gap(compiled, extended, rest)
                if gap is None:
                    return None
                deepest = max(deepest, gap)
        return deepest

    def _pattern(self, compiled: _CompiledRule, pattern: tuple[int, int, int], binding: dict[int, int]) -> str:
        def term(value: int) -> str:
            if value >= 0:
                return self.db.symbols[value]
            bound = binding.get(-1 - value)
            return self.db.symbols[bound] if bound is not None else compiled.variables[-1 - value]

        s, relation, o = pattern
        return f"{term(s)} {self.db.relations[relation]} {term(o)}"


def _bind(term: int, value: int, binding: dict[int, int]) -> bool:
    """Unify one pattern term with a symbol: constants must be equal, variables bind once."""
    if term >= 0:
        return term == value
    return binding.setdefault(-1 - term, value) == value


def _rank_key(proof: Proof) -> tuple[float, int, str, tuple[str, ...]]:
    return (-proof.score, proof.steps, proof.fact, proof.units)
