"""The LLM-backed plugins (seed 003, DESIGN §11): sd-llm-fast/deep, gs-llm-fast/deep and val-llm.

Each family is one class parameterised by a `Depth`: the fast and deep variants differ only in
descriptor, model role and how much the prompt asks for. The plugins never connect anywhere when
no endpoint is configured, never exceed the request's remaining call budget, and report how many
calls they made in `llm_calls` so the engine can charge the budget.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from core.answer.llm_answer import lead_of
from core.cnl import parse_intents
from core.infra.cancel import CallBudget
from core.infra.config import MemoryConfig
from core.infra.llm import LlmClient, LlmError
from core.kernel.contract import (
    Descriptor,
    GoalSolver,
    GsResult,
    KbResult,
    PlannerHints,
    Plugin,
    PluginType,
    RunContext,
    SdResult,
    SeedDetector,
    Status,
    Validator,
    ValResult,
)
from core.kernel.services import Services
from core.memory.cited import usable
from core.units import Act, Intent, KnowledgeUnit

NO_ENDPOINT = "no LLM endpoint configured"
BUDGET_EXHAUSTED = "LLM call budget exhausted (budgets.maxLlmCallsPerRequest)"

SD_SYSTEM = """\
You turn a user's request into Intent CNL, a small line-based language.
Reply with Intent CNL only: no prose, no code fences.

Grammar, one statement per line; @name labels a statement and $name refers to one:
  @i1 intent <act> "<target>"          what to do and what it is about (required)
  @i2 set $i1 output <atom or "text">   the kind of answer wanted, e.g. explanation, steps, list (required)
  @i3 set $i1 context "<text>"          optional: the situation the user describes
  @i4 set $i1 criterion "<text>"        optional: what a good answer must satisfy
  @i5 set $i1 evidence "<text>"         optional: the kind of evidence wanted
  @i6 constrain $i1 <atom or "text">    optional and repeatable: a restriction on the answer
<act> is exactly one of: {acts}.
Labels are unique within the reply. Every intent needs its own output statement.

Example, for "How do I rotate our API keys, and why does it matter? We use Vault.":
@i1 intent implement "API key rotation"
@i2 set $i1 output steps
@i3 set $i1 context "the team uses Vault"
@i4 intent explain "why API key rotation matters"
@i5 set $i4 output explanation

{depth}"""

SD_DEPTH = {
    "fast": "Keep it minimal: one intent per question, with context or constraints only when the user states them.",
    "deep": (
        "Decompose carefully: one intent per distinct question or task, the most specific act for each, "
        "every situation the user describes as context, every success condition as criterion, and every "
        "restriction as a constrain statement."
    ),
}

SD_RETRY = "That Intent CNL is invalid:\n{errors}\nReply with the corrected Intent CNL only."

GS_SYSTEM = """\
You answer a question using ONLY the evidence units given by the user; use no other knowledge.
Each unit starts with its id in square brackets. After every statement, cite the unit or units it
comes from by their id in square brackets, exactly as written, for example [{example_id}].
If the evidence does not answer the question, say so plainly.

{depth}"""

GS_DEPTH = {
    "fast": "Answer in two to four sentences.",
    "deep": (
        "Answer thoroughly: combine every relevant unit, keep the conditions and exceptions they state, "
        "and say where the evidence is incomplete or conflicting."
    ),
}

VAL_SYSTEM = """\
You check whether an answer is supported by the evidence units given by the user.
Reply with one JSON object only: {"verdict": "accept" or "reject", "reason": "<one sentence>"}.
Accept only if the answer addresses the question and every statement in it follows from the evidence;
otherwise reject and name the unsupported statement or what is missing."""

# Replies often wrap the answer in a fence (```cnl ... ```) and a line of prose around it, even when
# told not to; only the fenced part is the answer.
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
# A citation is a bracketed id; several may share a bracket ("[a, b]").
_CITATION = re.compile(r"\[([^\[\]]+)\]")
_CITATION_SEPARATORS = re.compile(r"[,;\s]+")

Depth = Literal["fast", "deep"]
# What the depth changes in a descriptor besides ids and roles: (costClass, preferredDepth).
_DEPTH_TRAITS: dict[str, tuple[Literal["moderate", "expensive"], Literal["medium", "deep"]]] = {
    "fast": ("moderate", "medium"),
    "deep": ("expensive", "deep"),
}


def _unfenced(text: str) -> str:
    match = _FENCE.search(text)
    return (match.group(1) if match else text).strip()


def _evidence_block(units: list[KnowledgeUnit]) -> str:
    return "\n".join(f"[{unit.id}] {unit.topic}: {unit.body}" for unit in units)


def _memory(ctx: RunContext, budget: int) -> tuple[str, str]:
    """The conversation's records (best first) packed into `budget` estimated tokens (seed 001): the
    prompt block, and what the attempt's reason says about it (what was left out, by id). Records
    are re-checked against this run's view: one citing a unit the caller cannot see now, or one
    edited since, is dropped and named."""
    records, withheld = usable(ctx.request.memory, ctx.view)
    if not records:
        return "", "; ".join(f"memory {line}" for line in withheld)
    # Only a prompt with conversation records packs them: an ask without memory, or without an
    # LLM, never imports the packer (issue 41).
    from core.memory.packing import estimate_tokens, pack

    lines = {m.id: f"- {m.question}" + (f" → {m.lead}" if m.lead else "") for m in records}
    packed = pack(records, budget, lambda m: estimate_tokens(lines[m.id]))
    note = f"memory: {len(packed.kept)} of {len(records)} record(s) in the prompt ({packed.cost}/{budget} tokens)"
    if packed.left_out:
        note += "; left out: " + ", ".join(m.id for m in packed.left_out)
    note += "".join(f"; {line}" for line in withheld)
    if not packed.kept:
        return "", note
    return "Earlier in this conversation (most relevant first):\n" + "\n".join(
        lines[m.id] for m in packed.kept
    ) + "\n\n", note


def _permitted(ctx: RunContext, unit_ids: tuple[str, ...]) -> list[KnowledgeUnit]:
    """The units the caller may see, looked up in the request's view; others never reach a prompt."""
    return ctx.view.units_of(unit_ids)


def _intent_line(intent: Intent) -> str:
    parts = [f'{intent.act.value} "{intent.target}" -> output {intent.output}']
    if intent.criterion:
        parts.append(f"criterion: {intent.criterion}")
    parts.extend(f"constraint: {constraint}" for constraint in intent.constraints)
    return "; ".join(parts)


def _budget(ctx: RunContext) -> CallBudget:
    assert ctx.llm_budget is not None  # RunContext.__post_init__ makes one when none is given
    return ctx.llm_budget


class _LlmPlugin(Plugin):
    """What every LLM plugin shares: the gate (endpoint, budget) and calls under its model role."""

    def __init__(self, client: LlmClient, descriptor: Descriptor, memory_budget: int):
        self.client = client
        self.descriptor = descriptor
        # Prompt budget B for conversation memory, in estimated tokens (engine.json memory.promptBudgetTokens).
        self.memory_budget = memory_budget

    def _refusal(self, ctx: RunContext) -> str | None:
        """Why this plugin cannot run at all, or None when it may make at least one call."""
        if not self.client.configured:
            return NO_ENDPOINT
        if _budget(ctx).left <= 0:
            return BUDGET_EXHAUSTED
        return None

    def _allowance(self, ctx: RunContext) -> int:
        return min(_budget(ctx).left, self.descriptor.max_llm_calls)

    def _chat(self, ctx: RunContext, messages: list[dict], *, response_format_json: bool = False) -> str:
        """One call, charged to the request's budget before it is made (so a timeout still counts),
        and stopped by the request's LLM deadline or the call's cancel token, whichever comes first."""
        budget = _budget(ctx)
        if not budget.take():
            raise LlmError(BUDGET_EXHAUSTED)
        return self.client.chat(
            messages,
            response_format_json=response_format_json,
            role=self.descriptor.model_roles[0],
            deadline=budget.deadline,
            deadline_name=budget.deadline_name,
            cancel=ctx.cancel,
        )


def _sd_descriptor(depth: Depth) -> Descriptor:
    return Descriptor(
        id=f"sd-llm-{depth}",
        type=PluginType.SD,
        name=f"LLM seed detector ({depth})",
        description="Asks the LLM to write Intent CNL for the request, validated by the CNL parser.",
        cost_class=_DEPTH_TRAITS[depth][0],
        uses_llm=True,
        # One call plus one corrective retry when the CNL does not validate.
        max_llm_calls=2,
        model_roles=(depth,),
        planner_hints=PlannerHints(
            supported_acts=tuple(Act),
            topic_tags=("general",),
            preferred_depth=_DEPTH_TRAITS[depth][1],
            evidence_style=("llm",),
            expected_latency_ms=1500 if depth == "fast" else 5000,
        ),
    )


class LlmSeedDetector(_LlmPlugin, SeedDetector):
    """sd-llm-fast / sd-llm-deep: the request as Intent CNL, with one corrective retry."""

    def __init__(
        self, client: LlmClient, depth: Depth = "fast", memory_budget: int = MemoryConfig().prompt_budget_tokens
    ):
        super().__init__(client, _sd_descriptor(depth), memory_budget)
        self.depth = depth

    def detect(self, ctx: RunContext) -> SdResult:
        refusal = self._refusal(ctx)
        if refusal:
            return SdResult(status=Status.UNSUPPORTED, reason=refusal)
        system = SD_SYSTEM.format(acts=", ".join(act.value for act in Act), depth=SD_DEPTH[self.depth])
        memory, memory_note = _memory(ctx, self.memory_budget)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": memory + ctx.request.question}]
        errors: list[str] = []
        # The refusal check above guarantees an allowance of at least one call.
        for calls in range(1, self._allowance(ctx) + 1):
            try:
                reply = self._chat(ctx, messages)
            except LlmError as exc:
                return SdResult(status=Status.ERROR, reason=exc.reason, llm_calls=calls)
            text = _unfenced(reply)
            intents, diagnostics = parse_intents(text, file="<sd-llm>")
            # A reply without any intent is an error diagnostic too (EMPTY_INTENT_DOCUMENT).
            errors = [d.format() for d in diagnostics if d.is_error]
            if not errors:
                return SdResult(
                    status=Status.SUCCESS, reason=memory_note, intent_cnl=text, intents=tuple(intents), llm_calls=calls
                )
            messages = [
                *messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": SD_RETRY.format(errors="\n".join(errors))},
            ]
        return SdResult(status=Status.ERROR, reason=f"LLM wrote invalid Intent CNL: {errors[0]}", llm_calls=calls)


def _gs_descriptor(depth: Depth) -> Descriptor:
    return Descriptor(
        id=f"gs-llm-{depth}",
        type=PluginType.GS,
        name=f"LLM goal solver ({depth})",
        description="Asks the LLM to answer only from the permitted evidence units, citing their ids.",
        cost_class=_DEPTH_TRAITS[depth][0],
        uses_llm=True,
        max_llm_calls=1,
        model_roles=(depth,),
        planner_hints=PlannerHints(
            supported_acts=tuple(Act),
            topic_tags=("general",),
            preferred_depth=_DEPTH_TRAITS[depth][1],
            evidence_style=("llm", "cited"),
            expected_latency_ms=2000 if depth == "fast" else 8000,
        ),
    )


class LlmGoalSolver(_LlmPlugin, GoalSolver):
    """gs-llm-fast / gs-llm-deep: an answer written from the evidence units, citing them as [id]."""

    def __init__(
        self, client: LlmClient, depth: Depth = "fast", memory_budget: int = MemoryConfig().prompt_budget_tokens
    ):
        super().__init__(client, _gs_descriptor(depth), memory_budget)
        self.depth = depth

    def solve(self, ctx: RunContext, intent: Intent, evidence: KbResult) -> GsResult:
        refusal = self._refusal(ctx)
        if refusal:
            return GsResult(status=Status.UNSUPPORTED, reason=refusal)
        units = _permitted(ctx, evidence.evidence_ids)
        if not units:
            return GsResult(status=Status.NO_CONTEXT, reason="no evidence to answer from")
        system = GS_SYSTEM.format(example_id=units[0].id, depth=GS_DEPTH[self.depth])
        memory, memory_note = _memory(ctx, self.memory_budget)
        user = f"{memory}Question: {ctx.request.question}\nTask: {_intent_line(intent)}\n\nEvidence:\n{_evidence_block(units)}"
        try:
            reply = self._chat(ctx, [{"role": "system", "content": system}, {"role": "user", "content": user}])
        except LlmError as exc:
            return GsResult(status=Status.ERROR, reason=exc.reason, llm_calls=1)
        answer = reply.strip()
        provided = {unit.id for unit in units}
        cited: dict[str, None] = {}  # insertion-ordered set: first citation first
        for group in _CITATION.findall(answer):
            for unit_id in _CITATION_SEPARATORS.split(group):
                # Ids the model invented (or recalled from elsewhere) are not evidence.
                if unit_id in provided:
                    cited[unit_id] = None
        if not cited:
            return GsResult(status=Status.ERROR, reason="LLM answer cites no provided evidence", llm_calls=1)
        return GsResult(
            status=Status.SUCCESS,
            reason=memory_note,
            answer=answer,
            cited_ids=tuple(cited),
            llm_calls=1,
            lead=lead_of(answer),
        )


class _Verdict(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built when an LLM first replies (issue 41)

    verdict: Literal["accept", "reject"]
    reason: str = ""


VAL_DESCRIPTOR = Descriptor(
    id="val-llm",
    type=PluginType.VAL,
    name="LLM validator",
    description="Asks the LLM whether the answer follows from the evidence it cites; a reject forces a replan.",
    cost_class="moderate",
    uses_llm=True,
    max_llm_calls=1,
    model_roles=("fast",),
    planner_hints=PlannerHints(
        supported_acts=tuple(Act),
        topic_tags=("general",),
        preferred_depth="medium",
        evidence_style=("llm", "cited"),
        expected_latency_ms=1500,
    ),
)


class LlmValidator(_LlmPlugin, Validator):
    """val-llm: a JSON accept/reject verdict on the answer against the evidence it cites."""

    def __init__(self, client: LlmClient, memory_budget: int = MemoryConfig().prompt_budget_tokens):
        super().__init__(client, VAL_DESCRIPTOR, memory_budget)

    def validate(self, ctx: RunContext, intent: Intent, evidence: KbResult, answer: GsResult) -> ValResult:
        refusal = self._refusal(ctx)
        if refusal:
            return ValResult(status=Status.UNSUPPORTED, reason=refusal)
        # A no-context or empty answer makes no claim an LLM could check.
        if answer.status is not Status.SUCCESS or not answer.answer:
            return ValResult(status=Status.UNSUPPORTED, reason="no answer to validate")
        units = _permitted(ctx, answer.cited_ids)
        memory, memory_note = _memory(ctx, self.memory_budget)
        user = (
            f"{memory}Question: {ctx.request.question}\n\nAnswer:\n{answer.answer}\n\n"
            f"Evidence cited:\n{_evidence_block(units) or '(none)'}"
        )
        messages = [{"role": "system", "content": VAL_SYSTEM}, {"role": "user", "content": user}]
        try:
            reply = self._chat(ctx, messages, response_format_json=True)
        except LlmError as exc:
            return ValResult(status=Status.ERROR, reason=exc.reason, llm_calls=1)
        try:
            verdict = _Verdict.model_validate_json(_unfenced(reply))
        except ValidationError:
            return ValResult(
                status=Status.ERROR, reason=f"LLM verdict is not the JSON asked for: {reply[:200]}", llm_calls=1
            )
        if verdict.verdict == "accept":
            return ValResult(status=Status.ACCEPTED, reason=_joined(verdict.reason, memory_note), llm_calls=1)
        return ValResult(
            status=Status.REJECTED, reason=_joined(verdict.reason or "rejected by the LLM", memory_note), llm_calls=1
        )


def _joined(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def llm_plugins(client: LlmClient, memory_budget: int = MemoryConfig().prompt_budget_tokens) -> list[Plugin]:
    """The five LLM plugins sharing one client, ready for the registry."""
    return [
        LlmSeedDetector(client, "fast", memory_budget),
        LlmSeedDetector(client, "deep", memory_budget),
        LlmGoalSolver(client, "fast", memory_budget),
        LlmGoalSolver(client, "deep", memory_budget),
        LlmValidator(client, memory_budget),
    ]


def from_services(services: Services) -> list[Plugin]:
    """The factory named in engine.json: the five LLM plugins on the session's shared client.

    The per-request call budget is the kernel's (`budgets.maxLlmCallsPerRequest` in engine.json).
    """
    return llm_plugins(services.llm, services.engine.memory.prompt_budget_tokens)
