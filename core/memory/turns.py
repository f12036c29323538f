"""Between a conversation and a run: the records a request is offered, and what a finished run leaves."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from core.kernel.contract import Request
from core.kernel.events import AnswerReady, IntentDetected, MemoryUse, RunStarted
from core.memory.cited import CitedView, cited_digests
from core.memory.conversation import Conversation
from core.memory.entities import entity_of
from core.memory.scoring import ScoredRecord

# How many of the best records a request is offered: a follow-up points back a few turns at most.
OFFERED = 5
_CITATION = re.compile(r"\s*\[[^\[\]]*::[^\[\]]*\]")


class VersionedView(CitedView, Protocol):
    """A caller's view with its version (`KBView.version`), which a run's `RunStarted` records."""

    @property
    def version(self) -> str: ...


def with_memory(request: Request, conversation: Conversation, view: CitedView | None) -> Request:
    """`request` offered the conversation's best records for its question (only those `view` still
    shows as they were), and told which it was not offered and why."""
    usable, withheld = conversation.vetted(view)
    recalled = conversation.score(request.question, usable, limit=OFFERED)
    return dataclasses.replace(request, memory=offered(recalled), memory_withheld=tuple(withheld))


def remember(conversation: Conversation, events: Sequence[object], view: VersionedView | None) -> None:
    """Leave the finished run's turn, each cited unit pinned to its content in `view`, which must be
    the view the run answered from (same version); a view since reloaded pins nothing, so the
    record can never be reused as if the new content had been cited."""
    turn = turn_of(events)
    if turn is not None:
        conversation.remember(turn.question, turn.lead, turn.entity, pinned(turn, events, view))


def pinned(turn: Turn, events: Sequence[object], view: VersionedView | None) -> dict[str, str]:
    """The turn's cited ids with their content digests in `view` (see `remember`; None pins nothing)."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    same = view is not None and started is not None and started.kb_version == view.version
    return dict(zip(turn.unit_ids, cited_digests(view, turn.unit_ids, pinned=same)))


def offered(scored: Sequence[ScoredRecord], limit: int = OFFERED) -> tuple[MemoryUse, ...]:
    return tuple(
        MemoryUse(
            id=s.record.id,
            turn=s.record.turn,
            scope=s.record.scope,
            kind=s.record.kind,
            question=s.record.question,
            lead=s.record.lead,
            entity=s.record.entity,
            unit_ids=s.record.unit_ids,
            unit_digests=s.record.unit_digests,
            sim=s.sim,
            recency=s.recency,
            scope_weight=s.scope_weight,
            quality=s.quality,
            score=s.score,
        )
        for s in scored[:limit]
    )


@dataclass(frozen=True)
class Turn:
    """What a finished run leaves in memory for the next question to refer back to."""

    question: str
    lead: str
    entity: str
    unit_ids: tuple[str, ...]


def turn_of(events: Sequence[object]) -> Turn | None:
    """What a finished run leaves in memory: the question as resolved, the answer's lead, what it was
    about and the units it cited. A run that grounded nothing leaves its question only, so a later
    "it" can still point at what was asked about."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    answer = next((e for e in reversed(events) if isinstance(e, AnswerReady)), None)
    if started is None or answer is None:
        return None
    intents = next((e for e in events if isinstance(e, IntentDetected)), None)
    question = intents.intents[0].target if intents is not None and intents.intents else started.question
    grounded = answer.status == "grounded"
    return Turn(
        question=question,
        lead=_lead(answer) if grounded else "",
        entity=entity_of(question),
        unit_ids=tuple(answer.evidence_ids),
    )


def _lead(answer: AnswerReady) -> str:
    """What the turn answered: the lead its one part asserts, else the first line it said
    (an answer quoting evidence, or several parts), citations dropped."""
    if len(answer.parts) == 1 and answer.parts[0].lead:
        return _CITATION.sub("", answer.parts[0].lead).strip()
    return _CITATION.sub("", answer.answer).strip().split("\n", 1)[0]
