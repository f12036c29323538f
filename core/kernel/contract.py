"""Plugin descriptors, typed results per family, the run context, and the registry (seed 003)."""

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass as pydantic_dataclass

from core.infra.cancel import CallBudget, CancelToken
from core.kernel.events import AnswerDetail
from core.kernel.steering import Intervention
from core.units import Act, Caller, Intent, KnowledgeUnit

if TYPE_CHECKING:
    from core.kb.knowledge_base import KBView
    from core.kernel.events import MemoryUse
    from core.question import Question, Questions


class PluginType(StrEnum):
    SD = "sd-plugin"
    KB = "kb-plugin"
    GS = "gs-plugin"
    VAL = "val-plugin"
    PLANNER = "mrp-plan-plugin"


STAGES: tuple[PluginType, ...] = (PluginType.SD, PluginType.KB, PluginType.GS, PluginType.VAL)
STAGE_NAMES: dict[PluginType, str] = {
    PluginType.SD: "sd",
    PluginType.KB: "kb",
    PluginType.GS: "gs",
    PluginType.VAL: "val",
    PluginType.PLANNER: "planner",
}


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")


class PlannerHints(_Model):
    supported_acts: tuple[Act, ...] = ()
    topic_tags: tuple[str, ...] = ()
    preferred_depth: Literal["shallow", "medium", "deep"] = "medium"
    evidence_style: tuple[str, ...] = ()
    expected_latency_ms: int = Field(default=10, ge=0, le=3_600_000)


class Descriptor(_Model):
    id: str
    type: PluginType
    name: str
    description: str
    cost_class: Literal["cheap", "moderate", "expensive"] = "cheap"
    uses_llm: bool = False
    remote: bool = False  # calls a remote service other than the LLM endpoint (costs money or time)
    max_llm_calls: int = Field(default=0, ge=0, le=100)
    model_roles: tuple[str, ...] = ()
    planner_hints: PlannerHints = PlannerHints()

    @property
    def costly(self) -> bool:
        """Worth holding before in the debugger: it calls an LLM or another remote service."""
        return self.uses_llm or self.remote


class Status(StrEnum):
    SUCCESS = "success"
    UNSUPPORTED = "unsupported"
    ERROR = "error"
    INSUFFICIENT = "insufficient"
    NO_CONTEXT = "no-context"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


# Results are validated when a plugin builds them (strict: no coercion, so a status must be a
# Status member, not a look-alike string), so a malformed result fails inside the plugin's call
# and the kernel records it as `error` instead of crashing later. Which statuses a family may
# return is the kernel's check (`core.kernel.engine`).
_RESULT_CONFIG = ConfigDict(strict=True, arbitrary_types_allowed=True)


@pydantic_dataclass(frozen=True, config=_RESULT_CONFIG)
class SdResult:
    """Seed detection's result: the question as Intent CNL, its intents, and what memory completed."""

    status: Status
    reason: str = ""
    intent_cnl: str = ""
    intents: tuple[Intent, ...] = ()
    context_units: tuple[KnowledgeUnit, ...] = ()
    llm_calls: int = Field(default=0, ge=0)
    # Questions found but not turned into intents because of budgets.maxSubQuestions.
    dropped_questions: int = Field(default=0, ge=0)
    # Follow-up completions from memory, and the records they used.
    resolved: tuple[str, ...] = ()
    # Pronouns left as asked, and why ("could not tell who 'she' is: …").
    unresolved: tuple[str, ...] = ()
    memory_used: tuple[str, ...] = ()


@pydantic_dataclass(frozen=True, config=_RESULT_CONFIG)
class KbResult:
    """`trace` holds the plugin's own score/proof events, so the kernel relays them without
    knowing anything about retrieval."""

    status: Status
    reason: str = ""
    outcome: Any = None
    trace: tuple[BaseModel, ...] = ()

    @property
    def evidence_ids(self) -> tuple[str, ...]:
        return tuple(self.outcome.evidence_ids) if self.outcome is not None else ()


# Every weak answer begins with this, whichever goal solver wrote it (the engine adds it if missing).
INSUFFICIENT_PREFACE = "The evidence is insufficient"


@pydantic_dataclass(frozen=True, config=_RESULT_CONFIG)
class GsResult:
    """`weak`: the solver itself found the evidence insufficient, so the answer is never grounded.
    `lead`: the short answer `answer` leads with ("" when it has none), as the solver built it
    (an LLM's text is read once, by core/answer/llm_answer.py)."""

    status: Status
    reason: str = ""
    answer: str = ""
    cited_ids: tuple[str, ...] = ()
    llm_calls: int = Field(default=0, ge=0)
    weak: bool = False
    detail: AnswerDetail | None = None
    lead: str = ""


@pydantic_dataclass(frozen=True, config=_RESULT_CONFIG)
class ValResult:
    """Validation's verdict on an answer and its reason."""

    status: Status
    reason: str = ""
    llm_calls: int = Field(default=0, ge=0)


@dataclass(frozen=True)
class Request:
    """What the user asked, as whom, and which plugins they pinned or excluded."""

    question: str
    caller: Caller = field(default_factory=Caller)
    pins: dict[str, str] = field(default_factory=dict)
    excluded: frozenset[str] = frozenset()
    planner: str | None = None
    excluded_units: frozenset[str] = frozenset()
    intent_cnl: str | None = None
    """Intent CNL the user wrote: replaces seed detection when set."""
    interventions: tuple[Intervention, ...] = ()
    """What a debugger changed, in order: recorded in the trace as `intervened` events."""
    memory: tuple["MemoryUse", ...] = ()
    """The caller's scored memory records (core/memory), best first: what a follow-up may refer to."""
    memory_withheld: tuple[str, ...] = ()
    """Why the caller's other records were not offered (a cited unit changed or left the view)."""


def _questions() -> "Questions":
    """An empty run's Questions, imported when first needed: analysing a question loads the
    tagger's tables (numpy), which what imports only the contract need not."""
    from core.question import Questions

    return Questions()


@dataclass
class RunContext:
    """Everything a plugin may read for one request; `view` holds only permitted units.

    `cancel` is this call's token: long loops poll `ctx.cancel.raise_if_cancelled()`. `llm_budget`
    is shared by the whole request; an LLM call is charged to it before it is made. `questions`
    is the run's too (the kernel makes one per run): every plugin reads its intent's analysed
    Question from it (`question`) instead of analysing the text again.
    """

    request: Request
    view: "KBView"
    services: object
    llm_calls_left: int = 0
    cancel: CancelToken = field(default_factory=CancelToken)
    llm_budget: CallBudget | None = None
    questions: "Questions" = field(default_factory=_questions)

    def __post_init__(self) -> None:
        if self.llm_budget is None:
            self.llm_budget = CallBudget(self.llm_calls_left, name="maxLlmCallsPerRequest")

    def question(self, intent: Intent) -> "Question":
        return self.questions.of(intent.target)


class Plugin(ABC):
    descriptor: Descriptor

    @property
    def id(self) -> str:
        return self.descriptor.id


class SeedDetector(Plugin):
    @abstractmethod
    def detect(self, ctx: RunContext) -> SdResult: ...


class KnowledgePlugin(Plugin):
    @abstractmethod
    def retrieve(self, ctx: RunContext, intent: Intent) -> KbResult: ...


class GoalSolver(Plugin):
    @abstractmethod
    def solve(self, ctx: RunContext, intent: Intent, evidence: KbResult) -> GsResult: ...


class Validator(Plugin):
    @abstractmethod
    def validate(self, ctx: RunContext, intent: Intent, evidence: KbResult, answer: GsResult) -> ValResult: ...


class RegistryError(Exception):
    """A plugin id or type the registry cannot accept or find."""


class Registry:
    """Plugins keyed by type and id; refuses duplicates and unknown ids with clear messages."""

    def __init__(self, plugins: Iterable[Plugin] = ()):
        self._by_id: dict[str, Plugin] = {}
        for plugin in plugins:
            self.add(plugin)

    def add(self, plugin: Plugin) -> None:
        if not isinstance(plugin.descriptor.type, PluginType):
            raise RegistryError(f"plugin {plugin.descriptor.id!r} has unknown type {plugin.descriptor.type!r}")
        if plugin.id in self._by_id:
            raise RegistryError(f"duplicate plugin id {plugin.id!r}")
        self._by_id[plugin.id] = plugin

    def get(self, plugin_id: str, expected: PluginType | None = None) -> Plugin:
        plugin = self._by_id.get(plugin_id)
        if plugin is None:
            known = ", ".join(sorted(self._by_id))
            raise RegistryError(f"unknown plugin id {plugin_id!r} (known: {known})")
        if expected is not None and plugin.descriptor.type is not expected:
            raise RegistryError(f"plugin {plugin_id!r} is a {plugin.descriptor.type.value}, not a {expected.value}")
        return plugin

    def of_type(self, plugin_type: PluginType) -> list[Plugin]:
        return [p for p in self._by_id.values() if p.descriptor.type is plugin_type]

    def __contains__(self, plugin_id: object) -> bool:
        return plugin_id in self._by_id

    def ids(self) -> list[str]:
        return list(self._by_id)
