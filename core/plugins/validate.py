"""val-grounded: a deterministic check that an answer rests on the evidence it was given.

Rejects an answer that cites nothing, cites a unit outside the kept evidence, whose short lead
(`GsResult.lead`) fails the support check of core/answer/support.py in every cited sentence (the
check gs-symbolic runs), or that leaves most of the question's focus terms unmentioned by both
the answer and the units it cites.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.lead_verification import verify_lead
from core.answer.passages import paragraph_units
from core.answer.proof_chains import proofs_of
from core.answer.proof_objects import proven_objects
from core.kernel.contract import (
    Descriptor,
    GsResult,
    KbResult,
    PlannerHints,
    PluginType,
    RunContext,
    Status,
    Validator,
    ValResult,
)
from core.plugins.solve import conversation_focus, focus_rules
from core.question.intent_cues import focus_coverage, unit_text
from core.units import Act, Intent, KnowledgeUnit

DESCRIPTOR = Descriptor(
    id="val-grounded",
    type=PluginType.VAL,
    name="Grounded validator",
    description="Accepts an answer only if it cites kept evidence and covers the question's focus terms.",
    cost_class="cheap",
    planner_hints=PlannerHints(
        supported_acts=tuple(Act),
        topic_tags=("general",),
        preferred_depth="shallow",
        evidence_style=("cited",),
        expected_latency_ms=1,
    ),
)

# "[id]" or "[id1, id2]": the citation forms every gs plugin writes.
_BRACKETS = re.compile(r"\[([^\[\]]+)\]")
_SEPARATORS = re.compile(r"[,;\s]+")


class GroundedValidator(Validator):
    descriptor = DESCRIPTOR

    def __init__(self, services: object = None):
        """Plugin factories pass the shared services; the checks need only the answer and evidence."""

    def validate(self, ctx: RunContext, intent: Intent, evidence: KbResult, answer: GsResult) -> ValResult:
        if answer.status is not Status.SUCCESS:
            return ValResult(status=Status.UNSUPPORTED, reason=f"nothing to validate: {answer.status.value} answer")
        retrieved = ctx.view.units_of(evidence.evidence_ids)
        # The solver may read on through a kept unit's paragraph (core/answer/passages.py); those
        # units come from the caller's view too.
        kept = [*retrieved, *paragraph_units(ctx.view, retrieved)]
        cited = citations(answer, kept)
        if not cited:
            return ValResult(status=Status.REJECTED, reason="the answer cites no evidence")
        allowed = {unit.id for unit in kept}
        foreign = [uid for uid in cited if uid not in allowed]
        if foreign:
            return ValResult(status=Status.REJECTED, reason=f"cites units not in the evidence: {', '.join(foreign)}")
        sources = [unit_text(unit) for unit in kept if unit.id in cited]
        question = ctx.question(intent)
        cues = question.cues
        focus = conversation_focus(ctx, evidence.outcome) if evidence.outcome is not None else None
        if not answer.weak and not proven_lead(answer.lead, evidence, set(cited)):
            citing = [unit for unit in kept if unit.id in cited]
            support = verify_lead(question, answer.lead, citing, kept, focus_rules(focus))
            if support is not None and not support.passed:
                return ValResult(status=Status.REJECTED, reason=f"support check {support.summary()}")
        coverage = focus_coverage(cues, [answer.answer, *sources])
        if focus is not None and focus.accepted and focus.unit in cited:
            # What the follow-up leaves out the conversation said (core/memory/position.Focus).
            return ValResult(status=Status.ACCEPTED, reason=f"cites {len(cited)} evidence unit(s); {focus.note()}")
        if not coverage.enough:
            return ValResult(
                status=Status.REJECTED,
                reason=f"focus terms not covered: {', '.join(coverage.missing)} ({coverage.summary()})",
            )
        return ValResult(status=Status.ACCEPTED, reason=f"cites {len(cited)} evidence unit(s); {coverage.summary()}")


def proven_lead(lead: str, evidence: KbResult, cited: set[str]) -> bool:
    """The answer's lead (`GsResult.lead`) is a fact ThinkingDB derived (or the objects the proofs
    give their subject by its relation, `proof_objects.proven_objects`), by a proof that rests only on
    cited units. A derived fact is said by no one sentence (that is why it was derived), so the
    support check, which looks for the lead in a cited sentence, does not apply: the chain is
    its support."""
    if not lead or evidence.outcome is None:
        return False
    proofs = proofs_of(evidence.outcome)
    return any(
        lead == proof.fact and proof.rule is not None and set(proof.leaf_units()) <= cited for proof in proofs
    ) or (proven_objects(lead, proofs, cited))


def citations(answer: GsResult, kept: Sequence[KnowledgeUnit]) -> tuple[str, ...]:
    """Ids the answer cites: its declared ones plus every bracketed token in its text.

    A bracket group that also occurs in a kept unit's text was quoted from that unit, so it is
    not a citation; any other bracketed token is, and must name a kept unit.
    """
    quoted = " ".join(unit_text(unit) for unit in kept)
    groups = [group for group in _BRACKETS.findall(answer.answer) if f"[{group}]" not in quoted]
    tokens = [token for group in groups for token in _SEPARATORS.split(group) if token]
    return tuple(dict.fromkeys([*answer.cited_ids, *tokens]))
