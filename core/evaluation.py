"""Labelled-query evaluation: recall@k and MRR per kb plugin, answer checks and safety gates (seed 002).

Recall is measured on each kb plugin run directly, so a plugin's score does not depend on which
plugin the planner would have picked. Answers and safety are measured on the whole engine run,
because a restricted id anywhere in the trace is a leak, whichever stage put it there.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, computed_field

from core.config import ConfigError, FusionMethod, RetrievalConfig, read_json
from core.diagnostics import Code, Diagnostic
from core.events import AnswerReady, IntentDetected, ProofNode, ProofsFound, RetrievalScored
from core.intent_cues import question_cues
from core.kb import visible_to
from core.plugins.base import KbResult, KnowledgePlugin, PluginType, Request, RunContext, Status
from core.plugins.calls import retrieve_bounded
from core.units import MAX_CALLER_TAGS, Caller, Intent, Region, Tag

if TYPE_CHECKING:
    from core.kb import KBView
    from core.session import Session

AnswerStatus = Literal["grounded", "weak", "no-context"]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
ALL_KINDS = "all"


# --- the queries file -----------------------------------------------------------------------------


class _Spec(BaseModel):
    # extra="forbid": a misspelt "must_not_apear" would otherwise silently disable a safety check.
    model_config = ConfigDict(frozen=True, extra="forbid")


class CallerSpec(_Spec):
    # The caller's own validated types, so a bad tag is reported with the queries file's line.
    tags: frozenset[Tag] = Field(default=frozenset(), max_length=MAX_CALLER_TAGS)
    region: Region | None = None
    as_of: dt.date | None = None


class QuerySpec(_Spec):
    """One labelled question; no `caller` means the public caller, as for `mrptui ask`."""

    id: Text
    question: Text
    caller: CallerSpec | None = None
    expect_evidence: tuple[Text, ...]
    must_not_appear: tuple[Text, ...]
    expect_answer_mentions: tuple[Text, ...] = ()
    expect_answer_excludes: tuple[Text, ...] = ()
    expect_status: AnswerStatus | None = None
    kind: str | None = None
    # The answer form the question asks for (yes_no, entity, list, ...): answer accuracy is
    # reported per type, as recall is per kind.
    type: str | None = None

    def as_caller(self) -> Caller:
        spec = self.caller or CallerSpec()
        return Caller(tags=spec.tags, region=spec.region, as_of=spec.as_of or dt.date.today())

    @property
    def kind_name(self) -> str:
        return self.kind or "unlabelled"

    @property
    def type_name(self) -> str:
        return self.type or self.kind_name


_QUERY_LIST: TypeAdapter[list[QuerySpec]] = TypeAdapter(list[QuerySpec])


def load_queries(path: Path) -> list[QuerySpec]:
    """Raises ConfigError with file and line for unreadable JSON, bad fields and duplicate ids."""
    data = read_json(path)
    text = path.read_text(encoding="utf-8")
    try:
        queries = _QUERY_LIST.validate_python(data)
    except ValidationError as exc:
        raise ConfigError(
            [_diagnostic(path, text, tuple(err["loc"]), f"{_loc_text(err['loc'])}: {err['msg']}") for err in exc.errors()]
        ) from None
    duplicates = _duplicate_ids(path, text, queries)
    if duplicates:
        raise ConfigError(duplicates)
    return queries


def stale_labels(path: Path, queries: Sequence[QuerySpec], known_ids: Collection[str]) -> list[Diagnostic]:
    """Labelled ids (expect_evidence, must_not_appear) that name no unit of the KB: after an edit
    renamed a unit, their checks would pass or fail for the wrong reason."""
    text = path.read_text(encoding="utf-8")
    spans = _element_spans(text)
    problems = []
    for index, query in enumerate(queries):
        start, end = spans[index]
        for field in ("expect_evidence", "must_not_appear"):
            for unit_id in getattr(query, field):
                if unit_id in known_ids:
                    continue
                found = text.find(json.dumps(unit_id), start, end)
                offset = found if found >= 0 else start
                line = text.count("\n", 0, offset) + 1
                col = offset - (text.rfind("\n", 0, offset) + 1) + 1
                problems.append(Diagnostic(
                    code=Code.UNKNOWN_LABELLED_ID, file=str(path), line=line, col=col,
                    message=f"query {query.id}: {field} names {unit_id!r}, which is not a unit of the KB",
                ))
    return problems


def _duplicate_ids(path: Path, text: str, queries: Sequence[QuerySpec]) -> list[Diagnostic]:
    first: dict[str, int] = {}
    problems = []
    for index, query in enumerate(queries):
        if query.id in first:
            where = _position(text, (first[query.id], "id"))[0]
            message = f"duplicate query id {query.id!r} (first on line {where})"
            problems.append(_diagnostic(path, text, (index, "id"), message))
        first.setdefault(query.id, index)
    return problems


def _loc_text(loc: Sequence[str | int]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".") or "<root>"


def _diagnostic(path: Path, text: str, loc: tuple[str | int, ...], message: str) -> Diagnostic:
    line, col = _position(text, loc)
    return Diagnostic(code=Code.INVALID_CONFIG, message=message, file=str(path), line=line, col=col)


def _position(text: str, loc: tuple[str | int, ...]) -> tuple[int, int]:
    """Line and column of a validation path: the query's element, then each key named inside it.

    core.config's locator skips list indices, which would point every query's error at the first
    query; here the index selects the element's span and keys are searched within it only.
    """
    if not loc or not isinstance(loc[0], int):
        return 1, 1
    start, end = _element_spans(text)[loc[0]]
    offset = start
    for part in loc[1:]:
        if isinstance(part, str):
            found = text.find(json.dumps(part), offset, end)
            offset = found if found >= 0 else offset
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _element_spans(text: str) -> list[tuple[int, int]]:
    """Start and end offsets of each element of the top-level array (the text is valid JSON)."""
    decoder = json.JSONDecoder()
    spans = []
    position = text.index("[") + 1
    while True:
        while text[position] in " \t\r\n,":
            position += 1
        if text[position] == "]":
            return spans
        _, end = decoder.raw_decode(text, position)
        spans.append((position, end))
        position = end


# --- results --------------------------------------------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class PluginRun(_Out):
    """One kb plugin on one query: where each expected id ranked, and which were kept."""

    plugin: str
    ranks: dict[str, int | None]
    kept: tuple[str, ...]
    recall_at_1: float
    recall_at_3: float
    recall_at_k: float
    reciprocal_rank: float
    # Why the plugin gave no candidates when it failed (e.g. its pluginTimeoutMs passed).
    error: str = ""


class QueryResult(_Out):
    id: str
    kind: str
    type: str
    fusion: str
    expect_evidence: tuple[str, ...]
    expect_status: AnswerStatus | None
    status: str
    answer: str
    retrieval: tuple[PluginRun, ...]
    forbidden_seen: tuple[str, ...]
    hidden_seen: tuple[str, ...]
    answer_checked: bool
    answer_problems: tuple[str, ...]


class RecallRow(_Out):
    plugin: str
    fusion: str
    kind: str
    count: int
    recall_at_1: float
    recall_at_3: float
    recall_at_k: float
    mrr: float


class GateResult(_Out):
    gate: str
    fusion: str
    checked: int
    failures: dict[str, str]

    @computed_field
    @property
    def passed(self) -> bool:
        return not self.failures


class AnswerChecks(_Out):
    fusion: str
    type: str
    checked: int
    failures: dict[str, str]

    @computed_field
    @property
    def passed(self) -> int:
        return self.checked - len(self.failures)

    @computed_field
    @property
    def rate(self) -> float:
        return round(self.passed / self.checked, 4) if self.checked else 1.0


class EvalReport(_Out):
    plugins: tuple[str, ...]
    fusion_methods: tuple[str, ...]
    queries: tuple[QueryResult, ...]
    recall: tuple[RecallRow, ...]
    gates: tuple[GateResult, ...]
    answers: tuple[AnswerChecks, ...]
    # Expected evidence the query's caller cannot see: absent or restricted, deliberately alike.
    unknown_ids: dict[str, tuple[str, ...]]
    # Author view only (None otherwise): labelled ids no KB file holds.
    absent_ids: dict[str, tuple[str, ...]] | None = None

    @computed_field
    @property
    def safe(self) -> bool:
        return all(gate.passed for gate in self.gates)

    def recall_for(self, plugin: str, fusion: str = "weighted", kind: str = ALL_KINDS) -> RecallRow:
        return next(r for r in self.recall if (r.plugin, r.fusion, r.kind) == (plugin, fusion, kind))

    def gate(self, name: str, fusion: str = "weighted") -> GateResult:
        return next(g for g in self.gates if (g.gate, g.fusion) == (name, fusion))

    def kinds(self) -> list[str]:
        return sorted({r.kind for r in self.recall if r.kind != ALL_KINDS})

    def answers_for(self, fusion: str = "weighted", type_name: str = ALL_KINDS) -> AnswerChecks:
        return next(a for a in self.answers if (a.fusion, a.type) == (fusion, type_name))


# --- running --------------------------------------------------------------------------------------


def evaluate(
    session: Session,
    queries: Sequence[QuerySpec],
    kb_plugins: Sequence[str],
    fusion_methods: Sequence[str] = (FusionMethod.WEIGHTED,),
    author_view: bool = False,
) -> EvalReport:
    """Score every query per fusion method. Raises RegistryError for an unknown kb plugin id.

    `author_view` adds `absent_ids`, which looks at the whole KB: for the KB's author only.
    """
    methods = [FusionMethod(m) for m in fusion_methods]
    results: list[QueryResult] = []
    for method in methods:
        runner = _Runner(_session_for(session, method), kb_plugins, method)
        results.extend(runner.run(query) for query in queries)
    return EvalReport(
        plugins=tuple(kb_plugins),
        fusion_methods=tuple(m.value for m in methods),
        queries=tuple(results),
        recall=tuple(_recall_rows(results, kb_plugins)),
        gates=tuple(_gates(results, methods)),
        answers=tuple(check for m in methods for check in _answer_checks(results, m.value)),
        unknown_ids=_unknown_ids(session, queries),
        absent_ids=_absent_ids(session, queries) if author_view else None,
    )


def with_fusion(config: RetrievalConfig, method: FusionMethod) -> RetrievalConfig:
    return config.model_copy(update={"fusion": config.fusion.model_copy(update={"method": method})})


def _session_for(session: Session, method: FusionMethod) -> Session:
    if session.retrieval.fusion.method is method:
        return session
    return session.with_retrieval(with_fusion(session.retrieval, method))


class _Runner:
    """Runs queries on one session (one fusion method)."""

    def __init__(self, session: Session, plugin_ids: Sequence[str], method: FusionMethod):
        self.session = session
        self.plugins: list[KnowledgePlugin] = [session.registry.get(pid, PluginType.KB) for pid in plugin_ids]
        self.method = method

    def run(self, query: QuerySpec) -> QueryResult:
        caller = query.as_caller()
        request = Request(question=query.question, caller=caller)
        view = self.session.view(caller)
        results = self._retrieve(request, view)
        candidates = {pid: [c.id for c in r.outcome.candidates] if r.outcome else [] for pid, r in results.items()}
        events = list(self.session.run(request))
        answer = next((e for e in reversed(events) if isinstance(e, AnswerReady)), None)
        seen = _Seen(query.question, events, candidates)
        return QueryResult(
            id=query.id,
            kind=query.kind_name,
            type=query.type_name,
            fusion=self.method.value,
            expect_evidence=query.expect_evidence,
            expect_status=query.expect_status,
            status=answer.status if answer else "failed",
            answer=answer.answer if answer else "",
            retrieval=tuple(_plugin_run(pid, result, query.expect_evidence) for pid, result in results.items()),
            forbidden_seen=seen.sightings(IdFinder(query.must_not_appear)),
            hidden_seen=seen.sightings(self._hidden_finder(caller)),
            answer_checked=bool(query.expect_status or query.expect_answer_mentions or query.expect_answer_excludes),
            answer_problems=_answer_problems(query, answer),
        )

    def _retrieve(self, request: Request, view: KBView) -> dict[str, KbResult]:
        """Each plugin on its own, with the act the planner would detect, as `mrptui retrieve` runs it."""
        intent = Intent(act=question_cues(request.question).act, target=request.question, output="text")
        context = RunContext(request=request, view=view, services=None)
        timeout = self.session.engine_config.budgets.plugin_timeout_ms
        return {p.id: retrieve_bounded(p, context, intent, timeout) for p in self.plugins}

    def _hidden_finder(self, caller: Caller) -> IdFinder:
        """Every stored unit the caller may not see: the label-free leak check.

        Recomputed from the raw units and the permission rule for each query, never taken from a
        view or a cache, so a cache that served the wrong view cannot also hide the leak.
        """
        return IdFinder(u.id for u in self.session.kb.units if not visible_to(u, caller))


class IdFinder:
    """Finds whole unit ids in text, so "a::unit-1" is not reported inside "a::unit-10"."""

    def __init__(self, ids: Iterable[str]):
        self.ids = frozenset(ids)
        # Longest first, so an id that is a prefix of another never shadows it.
        alternatives = "|".join(re.escape(i) for i in sorted(self.ids, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![\w:-])(?:{alternatives})(?![\w-])") if self.ids else None

    def find(self, text: str) -> set[str]:
        return set(self._pattern.findall(text)) if self._pattern else set()


class _Seen:
    """What one query's run showed: every event's JSON, the unit ids events rank, prove or cite,
    and each directly run plugin's candidate list."""

    def __init__(self, question: str, events: Sequence[object], candidates: dict[str, list[str]]):
        self.question = question
        self.texts = [(f"event {e.seq} {e.kind}", e.model_dump_json()) for e in events]
        self.unit_ids = [(f"event {e.seq} {e.kind}", _unit_ids(e)) for e in events]
        self.candidates = candidates

    def sightings(self, finder: IdFinder) -> tuple[str, ...]:
        """Each forbidden id the run showed, as "<id> in <where>".

        An id the question itself contains is echoed in query terms and reasons without being
        shown to anyone, so for those ids only the unit-id fields count, not free text.
        """
        typed = finder.find(self.question)
        in_text = IdFinder(finder.ids - typed) if typed else finder
        seen = [f"{uid} in {where}" for where, text in self.texts for uid in sorted(in_text.find(text))]
        seen += [f"{uid} in {where}" for where, ids in self.unit_ids for uid in sorted(typed & ids)]
        seen += [f"{uid} in {pid} candidates" for pid, ids in self.candidates.items() for uid in ids if uid in finder.ids]
        return tuple(dict.fromkeys(seen))


def _unit_ids(event: object) -> set[str]:
    """The ids an event ranks, proves, cites or adds as context."""
    if isinstance(event, RetrievalScored):
        return {c.id for c in event.candidates} | set(event.evidence_ids)
    if isinstance(event, ProofsFound):
        return {uid for proof in event.proofs for uid in _proof_units(proof)}
    if isinstance(event, AnswerReady):
        return set(event.evidence_ids) | {uid for part in event.parts for uid in part.cited_ids}
    if isinstance(event, IntentDetected):
        return set(event.context_unit_ids)
    return set()


def _proof_units(node: ProofNode) -> Iterator[str]:
    yield from node.units
    for premise in node.premises:
        yield from _proof_units(premise)


def _plugin_run(plugin_id: str, result: KbResult, expected: Sequence[str]) -> PluginRun:
    outcome = result.outcome
    ranked = {c.id: c.rank for c in outcome.candidates} if outcome else {}
    kept = set(outcome.evidence_ids) if outcome else set()
    ranks = {uid: ranked.get(uid) for uid in expected}
    found = [rank for rank in ranks.values() if rank is not None]
    total = len(expected) or 1
    return PluginRun(
        plugin=plugin_id,
        ranks=ranks,
        kept=tuple(uid for uid in expected if uid in kept),
        recall_at_1=sum(rank <= 1 for rank in found) / total,
        recall_at_3=sum(rank <= 3 for rank in found) / total,
        recall_at_k=sum(uid in kept for uid in expected) / total,
        reciprocal_rank=1 / min(found) if found else 0.0,
        error=result.reason if result.status is Status.ERROR else "",
    )


def _answer_problems(query: QuerySpec, answer: AnswerReady | None) -> tuple[str, ...]:
    status = answer.status if answer else "failed"
    problems = []
    if query.expect_status and status != query.expect_status:
        problems.append(f"status {status}, expected {query.expect_status}")
    text = answer.answer if answer else ""
    missing = [phrase for phrase in query.expect_answer_mentions if not _says(text, phrase)]
    if missing:
        problems.append(f"answer does not mention {', '.join(missing)}")
    present = [phrase for phrase in query.expect_answer_excludes if _says(text, phrase)]
    if present:
        problems.append(f"answer mentions excluded {', '.join(present)}")
    return tuple(problems)


def _says(text: str, phrase: str) -> bool:
    """The phrase as whole words, any case: "No" is not found inside "not" or "Nobody"."""
    left = r"\b" if phrase[:1].isalnum() else ""
    right = r"\b" if phrase[-1:].isalnum() else ""
    return re.search(left + re.escape(phrase) + right, text, re.IGNORECASE) is not None


# --- aggregation ----------------------------------------------------------------------------------


def _recall_rows(results: Sequence[QueryResult], plugins: Sequence[str]) -> list[RecallRow]:
    """Means over the queries that expect evidence, overall and per kind, per plugin and fusion."""
    labelled = [r for r in results if r.expect_evidence]
    rows = []
    for fusion in dict.fromkeys(r.fusion for r in results):
        in_fusion = [r for r in labelled if r.fusion == fusion]
        for kind in [ALL_KINDS, *sorted({r.kind for r in in_fusion})]:
            group = [r for r in in_fusion if kind in (ALL_KINDS, r.kind)]
            rows.extend(_recall_row(plugin, fusion, kind, group) for plugin in plugins)
    return rows


def _recall_row(plugin: str, fusion: str, kind: str, group: Sequence[QueryResult]) -> RecallRow:
    runs = [next(run for run in r.retrieval if run.plugin == plugin) for r in group]
    count = len(runs)

    def mean(values: Iterable[float]) -> float:
        return round(sum(values) / count, 4) if count else 0.0

    return RecallRow(
        plugin=plugin,
        fusion=fusion,
        kind=kind,
        count=count,
        recall_at_1=mean(run.recall_at_1 for run in runs),
        recall_at_3=mean(run.recall_at_3 for run in runs),
        recall_at_k=mean(run.recall_at_k for run in runs),
        mrr=mean(run.reciprocal_rank for run in runs),
    )


def _gates(results: Sequence[QueryResult], methods: Sequence[FusionMethod]) -> list[GateResult]:
    gates = []
    for method in methods:
        runs = [r for r in results if r.fusion == method.value]
        abstaining = [r for r in runs if r.expect_status == "no-context"]
        gates += [
            GateResult(
                gate="must-not-appear",
                fusion=method.value,
                checked=len(runs),
                failures={r.id: "; ".join(r.forbidden_seen) for r in runs if r.forbidden_seen},
            ),
            GateResult(
                gate="view-boundary",
                fusion=method.value,
                checked=len(runs),
                failures={r.id: "; ".join(r.hidden_seen) for r in runs if r.hidden_seen},
            ),
            GateResult(
                gate="abstention",
                fusion=method.value,
                checked=len(abstaining),
                failures={r.id: "expected no-context, came back grounded" for r in abstaining if r.status == "grounded"},
            ),
        ]
    return gates


def _answer_checks(results: Sequence[QueryResult], fusion: str) -> list[AnswerChecks]:
    """Answer accuracy over every checked query of one fusion method, then per question type."""
    checked = [r for r in results if r.fusion == fusion and r.answer_checked]
    types = sorted({r.type for r in checked})
    return [
        AnswerChecks(
            fusion=fusion,
            type=type_name,
            checked=len(group),
            failures={r.id: "; ".join(r.answer_problems) for r in group if r.answer_problems},
        )
        for type_name in [ALL_KINDS, *types]
        for group in [[r for r in checked if type_name in (ALL_KINDS, r.type)]]
    ]


def _unknown_ids(session: Session, queries: Sequence[QuerySpec]) -> dict[str, tuple[str, ...]]:
    """Expected evidence the query's caller cannot see: a typo here makes recall meaningless.

    Judged per caller from the raw units, and an id that is restricted reads exactly like one
    that does not exist, so the report confirms nothing outside the caller's view.
    """
    unknown = {}
    for query in queries:
        caller = query.as_caller()
        visible = {unit.id for unit in session.kb.units if visible_to(unit, caller)}
        unknown[query.id] = tuple(uid for uid in query.expect_evidence if uid not in visible)
    return {qid: ids for qid, ids in unknown.items() if ids}


def _absent_ids(session: Session, queries: Sequence[QuerySpec]) -> dict[str, tuple[str, ...]]:
    """Author view: labelled ids no file holds (a must_not_appear typo makes its gate pass vacuously)."""
    known = {unit.id for unit in session.kb.units}
    absent = {q.id: tuple(uid for uid in (*q.expect_evidence, *q.must_not_appear) if uid not in known) for q in queries}
    return {qid: ids for qid, ids in absent.items() if ids}
