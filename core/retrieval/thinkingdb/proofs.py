"""Proof trees, pathScore and the ranking of units for one query, and why a unit got no score.

Units are ranked by the best derivation they take part in, preferring derivations that answer the
question (query terms at two different ends); bare seed facts count as 0-step proofs only when
nothing was derived. No synthetic unit ever leaves this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from core.retrieval.thinkingdb.arrays import member
from core.retrieval.thinkingdb.budget import FIXPOINT, Budget, StopHook, budget_reason
from core.retrieval.thinkingdb.closure import Closure
from core.retrieval.thinkingdb.results import Proof, TdbResult
from core.retrieval.thinkingdb.seeds import find_neighbourhood

if TYPE_CHECKING:
    from core.retrieval.thinkingdb.facts import CompiledRule, ThinkingDB

TIE_POOL = 4
# A proof's units score in role order (`role_order`), each position ROLE_STEP below the one before
# (at most ROLE_POSITIONS steps): enough to order the units of one proof, small enough that every
# unit of the best chain stays within the profiles' gap cut.
ROLE_STEP = 0.02
ROLE_POSITIONS = 5
# Share of its pathScore a unit gets from a proof that connects nothing else the question names.
NON_ANSWER = 0.5


def _leaves(proof: Proof) -> list[Proof]:
    """The stated facts of a proof, in chain order."""
    return [proof] if not proof.premises else [leaf for p in proof.premises for leaf in _leaves(p)]


def role_order(proof: Proof) -> list[str]:
    """The proof's units by role: the conclusion's unit (whose stated fact completes the
    conclusion, the one closest to the goal) first, then the other steps in chain order."""
    units = list(proof.units)
    return units[-1:] + units[:-1]


def answer(db: ThinkingDB, text: str, preferred: Sequence[str], stop: StopHook = None) -> TdbResult:
    return _Query(db, text, preferred, stop).run()


def why_not(db: ThinkingDB, unit_id: str, fact: int, text: str, preferred: Sequence[str]) -> str:
    return _Query(db, text, preferred).why_not(unit_id, fact)


class _Query:
    """One query: its neighbourhood, its closure, and the proofs built from them."""

    def __init__(self, db: ThinkingDB, text: str, preferred: Sequence[str], stop: StopHook = None):
        self.db = db
        self.limits = db.limits
        self.hood = find_neighbourhood(db, text, preferred)
        # maxClosureMs bounds the closure from here: on a cluster the neighbourhood is fetched from
        # the shards first, each fetch bounded by shardTimeoutMs, and a slow network must not cut
        # the closure short (its proofs would then differ from one process's).
        self.budget = Budget(db.limits, stop)
        self.table = Closure(db, self.hood, self.budget)
        self.base_proofs: dict[int, Proof] = {}
        self.local_proofs: dict[int, Proof] = {}
        self.rounds, self.pending = 0, False
        self.answered = False
        self._ends: dict[str, tuple[int, bool]] = {}  # a proof end's name → (symbol id, touches the query)

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
        goal = member(subjects, self.hood.touching) | member(objects, self.hood.touching)
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
                uses_seed=fact in self.hood.seed_set,
            )
            self.base_proofs[fact] = found
        return found

    def _proof(self, local: int) -> Proof:
        """The proof tree of a local fact, rebuilt from the premise ids recorded when it was derived."""
        score = float(self.scores[local])
        if self.table.origin[local] >= 0:
            return self._base_proof(int(self.table.origin[local]), score)
        found = self.local_proofs.get(local)
        if found is None:
            premises = tuple(self._proof(int(p)) for p in self.table.premise_ids[local] if p >= 0)
            rule = self.db._rules[self.table.rule_of[local]].rule
            found = Proof(
                subject=self.db.symbols[self.table.ls[local]],
                relation=self.db.relations[self.table.lr[local]],
                object=self.db.symbols[self.table.lo[local]],
                confidence=float(self.table.conf[local]),
                score=score,
                steps=int(self.table.steps[local]),
                rule=rule.id,
                weight=rule.weight,
                premises=premises,
                units=tuple(dict.fromkeys(u for p in premises for u in p.units)),
                uses_seed=bool(self.table.seeded[local]),
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
        db, seeds = self.db, self.hood.seeds
        self.scores = self._scores(self.table.conf, self.table.steps, self.table.ls, self.table.lo, self.table.seeded)
        seed_scores = self._scores(db.C[seeds], 0, db.S[seeds], db.O[seeds], np.ones(len(seeds), dtype=bool))
        seed_proofs = [self._base_proof(f, s) for f, s in zip(seeds.tolist(), seed_scores.tolist(), strict=True)]
        derived = np.fromiter(self.table.current.values(), dtype=np.int64, count=len(self.table.current))
        if not len(derived):
            return seed_proofs, sorted(seed_proofs, key=_rank_key)[: self.limits.max_proofs]
        subjects, objects = self.table.ls[derived], self.table.lo[derived]
        answers = member(subjects, self.hood.touching) & member(objects, self.hood.touching) & (subjects != objects)
        self.answered = bool(answers.any())
        if self.answered:
            derived = derived[answers]
        scores, steps = self.scores[derived], self.table.steps[derived]
        # A proof connecting more of the question's named entities ranks first, then pathScore.
        connects = np.bitwise_count(self.table.named[derived]).astype(np.int64)
        order = np.lexsort((steps, -scores, -connects))
        keep = np.ones(len(scores), dtype=bool)
        if len(order) > self.limits.max_proofs:
            last = order[self.limits.max_proofs - 1]  # ties with the last kept one stay candidates
            tied = (scores == scores[last]) & (steps <= steps[last])
            keep = (connects > connects[last]) | ((connects == connects[last]) & ((scores > scores[last]) | tied))
        # Ties are broken by fact text below, but at most TIE_POOL × maxProofs trees are built: with
        # equal weights a closure can tie on thousands of facts.
        pool = np.sort(order[keep[order]][: TIE_POOL * self.limits.max_proofs])
        candidates = [(int(connects[k]), self._proof(int(derived[k]))) for k in pool]
        candidates.sort(key=lambda c: (-c[0], *_rank_key(c[1])))
        return seed_proofs, [proof for _, proof in candidates[: self.limits.max_proofs]]

    def run(self) -> TdbResult:
        hood, table = self.hood, self.table
        self.rounds, self.pending = table.run() if len(hood.facts) else (0, False)
        stop = self.budget.reason or FIXPOINT
        if stop == FIXPOINT and (self.pending or hood.depth_cut):
            stop = budget_reason("maxDepth", self.limits.max_depth)
        seeds, ranked = self._ranked()
        best: dict[str, Proof] = {}
        unit_scores: dict[str, float] = {}
        for proof in ranked:
            order, factor = role_order(proof), 1.0
            if not self._answers(proof):
                order, factor = self._added(proof), NON_ANSWER
            for position, unit in enumerate(order):
                if unit not in best:
                    best[unit] = proof
                    unit_scores[unit] = proof.score * factor * (1 - ROLE_STEP * min(position, ROLE_POSITIONS))
        for compiled in self.db._rules:
            stats = table.stats[compiled.rule.id]
            if not stats.fired:
                stats.first_unmatched_premise = table.first_unmatched(compiled)
        return TdbResult(
            unit_scores=unit_scores,
            top_score=max((proof.score for proof in ranked), default=0.0),
            proofs=ranked,
            best_proof_by_unit=best,
            seeds=seeds,
            stop_reason=stop,
            rounds=self.rounds,
            derived_count=len(table.current),
            rule_stats=table.stats,
            neighbourhood_size=len(hood.facts),
            capped=self._capped(),
        )

    def _answers(self, proof: Proof) -> bool:
        """Whether a ranked proof connects two different things the question names."""
        if proof.steps:
            return self.answered
        (subject, subject_touches), (obj, object_touches) = self._end(proof.subject), self._end(proof.object)
        return subject_touches and object_touches and subject != obj

    def _added(self, proof: Proof) -> list[str]:
        """What a proof that connects nothing else the question names adds beyond BM25: the unit
        of its last step, when the conclusion is about the question and that step's own fact is
        not (BM25 finds units naming the question's terms; a bare seed fact adds nothing)."""
        if not proof.steps or not self._touches(proof):
            return []
        last = _leaves(proof)[-1]
        return [] if self._touches(last) else list(last.units)

    def _touches(self, proof: Proof) -> bool:
        return self._end(proof.subject)[1] or self._end(proof.object)[1]

    def _end(self, name: str) -> tuple[int, bool]:
        """A proof end's symbol id and whether it shares a token with the query; remembered per
        query, since the ranked proofs keep meeting the same few entities."""
        found = self._ends.get(name)
        if found is None:
            symbol, touching = self.db.symbol_id(name), self.hood.touching
            at = int(touching.searchsorted(symbol))
            found = self._ends[name] = (symbol, at < len(touching) and int(touching[at]) == symbol)
        return found

    def _capped(self) -> tuple[str, ...]:
        return tuple(
            name
            for name, cut in (("maxNeighbourhoodFacts", self.hood.capped), ("maxJoinRows", self.table.join_capped))
            if cut
        )

    def _connects(self, local: int) -> bool:
        """Whether a derived fact connects two different things the question names."""
        ends = np.array([self.table.ls[local], self.table.lo[local]])
        return bool(member(ends, self.hood.touching).all() and ends[0] != ends[1])

    def _dropped(self, unit_id: str, derived: list[int], result: TdbResult) -> str:
        """Why a unit on a seed or in a derivation got no score: the reason that applied (the
        maxProofs cut only when its proofs were among more than maxProofs and fell below it)."""
        made = len(self.table.current)
        if not derived and made:
            return (
                f"its fact is a seed, and seed facts rank units only when nothing was derived "
                f"({made} facts were; BM25 finds units that name the query's terms)"
            )
        if any(unit_id in proof.units for proof in result.proofs):
            return (
                "its proofs rank, but their conclusions do not connect two things the question names: such a "
                "proof counts only its last step's unit, when that step adds what BM25 does not find"
            )
        if derived and self.answered and not any(self._connects(local) for local in derived):
            return "its derivations do not connect two things the question names; only those that do rank units"
        competing = (
            (sum(self._connects(local) for local in self.table.current.values()) if self.answered else made)
            if derived
            else len(self.hood.seeds)
        )
        return f"its proofs ranked below the maxProofs cut ({self.limits.max_proofs} of {competing} proofs)"

    def why_not(self, unit_id: str, fact: int) -> str:
        db, limits = self.db, self.limits
        result = self.run()
        if unit_id in result.unit_scores:
            return f"not absent: scored {result.unit_scores[unit_id]:.3f} via {result.best_proof_by_unit[unit_id].fact}"
        if not len(self.hood.seeds):
            return "no seed matched the query"
        derived = [local for local in self.table.current.values() if unit_id in self._proof(local).units]
        if fact in self.hood.seed_set or derived:
            return self._dropped(unit_id, derived, result)
        relation = int(db.R[fact])
        if relation not in db._premise_uses:
            return f"the fact matched no query term and no rule reads '{db.relations[relation]}'"
        if not self.hood.in_neighbourhood[fact]:
            if self.hood.capped:
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
        if result.stop_reason != FIXPOINT:
            return f"derivation stopped ({result.stop_reason}) before a proof used it"
        return f"no rule can use it within maxDepth {limits.max_depth} rounds"

    def _gap(self, compiled: CompiledRule, binding: dict[int, int], remaining: list[int]) -> int | None:
        """The deepest of the `remaining` premises that no fact matches under `binding`, or None
        when they all match together."""
        if not remaining:
            return None
        j, rest = remaining[0], remaining[1:]
        s, relation, o = compiled.premises[j]
        grounded = (binding.get(-1 - s, s) if s < 0 else s, relation, binding.get(-1 - o, o) if o < 0 else o)
        deepest = j
        for local in self.table.matching(grounded, self.limits.max_depth).tolist():
            extended = dict(binding)
            if _bind(s, int(self.table.ls[local]), extended) and _bind(o, int(self.table.lo[local]), extended):
                gap = self._gap(compiled, extended, rest)
                if gap is None:
                    return None
                deepest = max(deepest, gap)
        return deepest

    def _pattern(self, compiled: CompiledRule, pattern: tuple[int, int, int], binding: dict[int, int]) -> str:
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
