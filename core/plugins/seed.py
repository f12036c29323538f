"""sd-symbolic: the request as Intent CNL from keyword cues alone (no LLM, microseconds).

The Intent CNL document is written and then read back with the same parser that checks every
other CNL, so a seed detector's output is never trusted unvalidated.
"""

from __future__ import annotations

from core.cnl import format_intents, parse_intents
from core.infra.config import Budgets, MemoryConfig
from core.kernel.contract import Descriptor, PlannerHints, PluginType, RunContext, SdResult, SeedDetector, Status
from core.kernel.events import MemoryUse
from core.memory.cited import usable
from core.memory.followup import Candidate, resolve
from core.question import Question
from core.question.intent_cues import split_input
from core.units import Act, Intent, KnowledgeUnit

CURRENT_TURN_FILE = "<current-turn>"
# Units of a cited file read to count how often a referent is said there (budget: the file's first
# maxDocumentUnits units, in reading order).
MAX_DOCUMENT_UNITS = 400

DESCRIPTOR = Descriptor(
    id="sd-symbolic",
    type=PluginType.SD,
    name="Symbolic seed detector",
    description="Keyword cues pick each question's act and answer shape; stated facts become current-turn units.",
    cost_class="cheap",
    planner_hints=PlannerHints(
        supported_acts=tuple(Act),
        topic_tags=("general",),
        preferred_depth="shallow",
        evidence_style=("symbolic",),
        expected_latency_ms=1,
    ),
)


class SymbolicSeedDetector(SeedDetector):
    descriptor = DESCRIPTOR

    def __init__(self, services: object = None):
        """Plugin factories pass the shared services; only the sub-question budget is read from them."""
        engine = getattr(services, "engine", None)
        self.max_questions = engine.budgets.max_sub_questions if engine is not None else Budgets().max_sub_questions
        self.memory_min_score = (engine.memory if engine is not None else MemoryConfig()).min_score

    def detect(self, ctx: RunContext) -> SdResult:
        question = ctx.request.question.strip()
        if not question:
            return SdResult(status=Status.ERROR, reason="empty question")
        context, questions = split_input(question)
        # Analysing questions the kernel will not answer would only cost time (maxSubQuestions).
        dropped = len(questions) - self.max_questions
        # Re-checked against this run's view: a record citing a unit the caller cannot see now, or
        # one edited since, is not used.
        records, withheld = usable(ctx.request.memory, ctx.view)
        candidates = [_candidate(m, ctx.view) for m in records]
        asked = questions[: self.max_questions]
        resolutions = [resolve(part, candidates, self.memory_min_score, asked[:i]) for i, part in enumerate(asked)]
        intents = [_intent(ctx.questions.of(r.question), context) for r in resolutions]
        cnl = format_intents(intents)
        parsed, diagnostics = parse_intents(cnl, file="<sd-symbolic>")
        errors = [d.format() for d in diagnostics if d.is_error]
        if errors:
            return SdResult(status=Status.ERROR, reason=f"invalid Intent CNL: {errors[0]}", intent_cnl=cnl)
        units = current_turn_units(context)
        acts = ", ".join(intent.act.value for intent in parsed)
        reason = f"{len(parsed)} intent(s) ({acts}); {len(units)} current-turn unit(s)"
        if dropped > 0:
            reason += f"; {dropped} more question(s) left out (budgets.maxSubQuestions is {self.max_questions})"
        resolved = tuple(note for r in resolutions for note in r.notes)
        if resolved:
            reason += "; from memory: " + "; ".join(resolved)
        unresolved = tuple(note for r in resolutions for note in r.unresolved)
        if unresolved:
            reason += "; " + "; ".join(unresolved)
        if withheld:
            reason += "; memory " + "; ".join(withheld)
        return SdResult(
            status=Status.SUCCESS,
            reason=reason,
            intent_cnl=cnl,
            intents=tuple(parsed),
            context_units=units,
            dropped_questions=max(0, dropped),
            resolved=resolved,
            unresolved=unresolved,
            memory_used=tuple(dict.fromkeys(i for r in resolutions for i in r.used)),
        )


def _candidate(use: MemoryUse, view) -> Candidate:
    # Read from this run's view only: `usable` kept records whose units it shows, and a unit it
    # does not show (another caller's) is never read.
    units = [u for u in (view.get(uid) for uid in use.unit_ids) if u is not None] if view is not None else []
    files = dict.fromkeys(u.location.file for u in units if u.location is not None)
    whole = [u for file in files for u in view.in_file(file)[:MAX_DOCUMENT_UNITS]]
    return Candidate(
        id=use.id,
        turn=use.turn,
        question=use.question,
        lead=use.lead,
        entity=use.entity,
        score=use.score,
        story=tuple(_text(u) for u in units),
        document=" ".join(_text(u) for u in whole),
    )


def _text(unit: KnowledgeUnit) -> str:
    return unit.claim or unit.procedure or ""


def _intent(question: Question, context: list[str]) -> Intent:
    cues = question.cues
    return Intent(act=cues.act, target=question.text, output=cues.output, context=" ".join(context) or None)


def current_turn_units(sentences: list[str]) -> tuple[KnowledgeUnit, ...]:
    """The user's own statements as units of the "current-turn" source, read like any plain text."""
    if not sentences:
        return ()
    from core.cnl import read_text  # the readers load only when a user's statement is read

    units, _ = read_text(" ".join(sentences), file=CURRENT_TURN_FILE, kind="text")
    # A sentence the reader cannot turn into a unit is still part of the intent's context.
    return tuple(unit.model_copy(update={"current_turn": True}) for unit in units)
