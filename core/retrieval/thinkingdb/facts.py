"""The fact store of one KB view: symbols and relations interned to ints, facts in numpy arrays,
compiled rules, and every index a query reads, built once by `ThinkingDB.build`.

Symbols compare by `core.retrieval.rules.symbol_key` (case-insensitive, `_`/`-` as spaces, whitespace
collapsed, edge punctuation stripped); the first spelling seen is the one displayed. A symbol
whose name is only stopwords ("A", "IT") has no tokens, so it matches the query only by its exact,
case-sensitive spelling: "A" in "Why is A slow?" is a name, "a" in "find a tool" is an article.
One fact is kept per distinct triple, stated by its most confident unit.
"""

from __future__ import annotations

import copy
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from core.retrieval.rules import Limits, Rule, RuleSet, is_variable, relation_key, symbol_key
from core.retrieval.thinkingdb import proofs
from core.retrieval.thinkingdb.arrays import EMPTY, csr
from core.retrieval.thinkingdb.budget import StopHook
from core.retrieval.thinkingdb.results import TdbResult
from core.retrieval.thinkingdb.seeds import words
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A rule with its terms turned into symbol ids and variable slots, for the joins."""

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


NO_FACT = "unit has no symbolic fact"


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
        self._members: Container[str] | None = None
        self._rules: list[CompiledRule] = []
        self._premise_uses: dict[int, list[tuple[CompiledRule, int]]] = {}
        self.S = self.R = self.O = EMPTY
        self.C = np.zeros(0, dtype=np.float64)
        self.indexes: FactIndexes

    # ---- build -------------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        units: Iterable[KnowledgeUnit],
        ruleset: RuleSet,
        members: Container[str] | None = None,
        order: tuple[Sequence[str], Sequence[str]] = ((), ()),
    ) -> ThinkingDB:
        """Facts of `units`. `members` (the view's ids) is given when `units` are only the view's
        units that state a fact: any other member then simply has no symbolic fact. `order` (symbol
        spellings, relations) are interned first, in that order: a ThinkingDB of some of a view's
        facts then numbers them as the whole view's does (core/kb/sharding/sharded_tdb.py)."""
        db = cls(ruleset)
        db._members = members
        for name in order[0]:
            db._symbol(name)
        for relation in order[1]:
            db._relation(relation)
        triples, confidences = db._collect(units)
        db._rules = [db._compile(rule) for rule in ruleset.rules]
        facts = np.array(triples, dtype=np.int64).reshape(-1, 3)
        db.S, db.R, db.O = (np.ascontiguousarray(facts[:, k]) for k in range(3))
        db.C = np.array(confidences, dtype=np.float64)
        db._premise_uses = db._premises_by_relation()
        db.indexes = index_facts(db)
        return db

    def for_members(self, members: Container[str]) -> ThinkingDB:
        """The same facts for a view that adds only units stating no fact (shared, not copied)."""
        twin = copy.copy(self)
        twin._members = members
        return twin

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

    def symbol_id(self, name: str) -> int:
        """Id of a known symbol (-1 when no fact names it); never adds one."""
        return self._symbol_ids.get(symbol_key(name), -1)

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
            return NO_FACT
        if unit.confidence < self.limits.min_confidence:
            return f"fact confidence {unit.confidence:g} is below minConfidence {self.limits.min_confidence:g}"
        subject, obj = self._symbol(unit.subject or ""), self._symbol(unit.object or "")
        if subject < 0 or obj < 0:
            return "the fact's subject or object has no name left after normalising"
        return subject, self._relation(unit.relation), obj

    def fact_of(self, unit: KnowledgeUnit) -> int | None:
        """The fact whose triple `unit` states (None when it states none here)."""
        triple = self._triple(unit)
        return None if isinstance(triple, str) else self._fact_of_triple.get(triple)

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

    def _compile(self, rule: Rule) -> CompiledRule:
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
        return CompiledRule(rule, premises, head, tuple(variables), last_round)

    def _premises_by_relation(self) -> dict[int, list[tuple[CompiledRule, int]]]:
        uses: dict[int, list[tuple[CompiledRule, int]]] = {}
        for compiled in self._rules:
            for index, (_, relation, _) in enumerate(compiled.premises):
                uses.setdefault(relation, []).append((compiled, index))
        return uses

    # ---- queries -----------------------------------------------------------------------------

    @property
    def fact_count(self) -> int:
        return len(self.unit_ids)

    def query(self, query_text: str, preferred_terms: Sequence[str] | None = None, stop: StopHook = None) -> TdbResult:
        """Proofs for one query. `stop` (a token with `.cancelled`, or a callable) is polled between
        rounds and inside large joins; once it is set the closure stops, reported as "cancelled"."""
        return proofs.answer(self, query_text, preferred_terms or (), stop)

    def explain_absence(self, unit_id: str, query_text: str, preferred_terms: Sequence[str] | None = None) -> str:
        """The ThinkingDB lane's reason why `unit_id` got no score for this query."""
        if unit_id in self._absent:
            return self._absent[unit_id]
        fact = self._fact_of_unit.get(unit_id)
        if fact is None:
            return NO_FACT if self._members is not None and unit_id in self._members else "unit is not in this view"
        return proofs.why_not(self, unit_id, fact, query_text, preferred_terms or ())


def index_facts(db: ThinkingDB) -> FactIndexes:
    n_symbols = len(db.symbols)
    read = np.array(sorted(db._premise_uses), dtype=np.int64)
    followed = np.flatnonzero(np.isin(db.R, read))
    symbol_tokens = [tokenize(symbol_key(name)) for name in db.symbols]
    token_lists = [sorted(set(tokens)) for tokens in symbol_tokens]
    pair_keys = db.S * max(n_symbols, 1) + db.O
    by_pair = np.argsort(pair_keys, kind="stable")
    return FactIndexes(
        by_subject=csr(n_symbols, db.S, rank=-db.C),
        by_object=csr(n_symbols, db.O, rank=-db.C),
        by_pair=by_pair,
        pair_keys=pair_keys[by_pair],
        read_relations=read,
        followed_by_subject=csr(n_symbols, db.S, subset=followed),
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
            plain.setdefault(words(name), []).append(symbol)
    return plain
