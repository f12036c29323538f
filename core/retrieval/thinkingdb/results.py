"""What a ThinkingDB query returns: proof trees, per-rule statistics and the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# "fixpoint", "cancelled", or the budget that stopped the closure: "budget: maxDerivedFacts=64",
# "budget: maxDepth=3", "budget: maxClosureMs=2000", "budget: maxClosureMb=256".
StopReason = str


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

    def leaf_units(self) -> list[str]:
        """The units of the stated facts the proof rests on, in proof order."""
        if not self.premises:
            return list(self.units)
        return [uid for premise in self.premises for uid in premise.leaf_units()]

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
    """What one rule did in a closure: how often it fired, with which bindings, and what it derived."""

    fired: int = 0
    bindings: list[dict[str, str]] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    # For a rule that never fired: 0-based index of its first premise that no neighbourhood or
    # derived fact matches on its own (None when each matches but they never join).
    first_unmatched_premise: int | None = None


@dataclass(frozen=True)
class TdbResult:
    """One ThinkingDB closure: unit scores, the proofs behind them, and why and where it stopped."""

    unit_scores: dict[str, float]
    proofs: list[Proof]
    best_proof_by_unit: dict[str, Proof]
    seeds: list[Proof]
    stop_reason: StopReason
    rounds: int
    derived_count: int
    rule_stats: dict[str, RuleStats]
    neighbourhood_size: int
    # The best proof's pathScore: the TDB lane divides unit scores by it (`lane_scores`).
    top_score: float = 0.0
    # Work caps that cut something: "maxNeighbourhoodFacts" (the forward walk stopped early) and
    # "maxJoinRows" (a hub join dropped its later rows).
    capped: tuple[str, ...] = ()

    def lane_scores(self) -> dict[str, float]:
        """Unit scores over the best proof's pathScore, in [0, 1]: units of a proof that answers
        the question lead, in role order; units that only add a conclusion stay below them even
        when nothing answers (normalising by the top unit would lift them to 1)."""
        if self.top_score <= 0:
            return {}
        return {unit: score / self.top_score for unit, score in self.unit_scores.items() if score > 0}
