"""The five LLM plugins against a real loopback HTTP server playing scripted model replies."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.infra.llm import LlmClient, LlmConfig
from core.kernel.contract import GsResult, KbResult, PluginType, Request, RunContext, Status
from core.plugins.llm import LlmGoalSolver, LlmSeedDetector, LlmValidator, llm_plugins
from core.units import Act, Intent, KnowledgeUnit, Role

UNIT_A = "ops::chunk-000::unit-000"
UNIT_B = "ops::chunk-000::unit-001"
SECRET = "hr::chunk-000::unit-000"

GOOD_CNL = '@i1 intent explain "key rotation"\n@i2 set $i1 output explanation'
BAD_CNL = '@i1 intent ponder "key rotation"'


class FakeView:
    """The permitted view: `get` answers only for units the caller may see."""

    def __init__(self, *units: KnowledgeUnit):
        self._units = {unit.id: unit for unit in units}

    def get(self, unit_id: str) -> KnowledgeUnit | None:
        return self._units.get(unit_id)

    def units_of(self, unit_ids) -> list[KnowledgeUnit]:
        return [unit for unit in map(self.get, unit_ids) if unit is not None]


def unit(unit_id: str, topic: str, claim: str) -> KnowledgeUnit:
    source, chunk, _ = unit_id.split("::")
    return KnowledgeUnit(
        id=unit_id, source_id=source, chunk_id=f"{source}::{chunk}", role=Role.EXPLANATION, topic=topic, claim=claim
    )


VIEW = FakeView(
    unit(UNIT_A, "key rotation", "Keys are rotated every 90 days by the vault job."),
    unit(UNIT_B, "rotation alerts", "A failed rotation pages the on-call engineer."),
)
INTENT = Intent(act=Act.EXPLAIN, target="key rotation", output="explanation")


def ctx(calls_left: int = 4, question: str = "How are keys rotated?") -> RunContext:
    return RunContext(request=Request(question=question), view=VIEW, services=None, llm_calls_left=calls_left)


def evidence(*unit_ids: str) -> KbResult:
    # KbResult reads only `outcome.evidence_ids`; a stand-in keeps these tests off the retrieval code.
    return KbResult(status=Status.SUCCESS, outcome=SimpleNamespace(evidence_ids=unit_ids))


@pytest.fixture
def client(llm_server) -> LlmClient:
    return LlmClient(LlmConfig(base_url=llm_server.url, api_key="sk-test", timeout_s=0.3))


UNCONFIGURED = LlmClient(LlmConfig())


def test_descriptors():
    plugins = {p.id: p.descriptor for p in llm_plugins(UNCONFIGURED)}
    assert list(plugins) == ["sd-llm-fast", "sd-llm-deep", "gs-llm-fast", "gs-llm-deep", "val-llm"]
    assert all(d.uses_llm and d.max_llm_calls >= 1 for d in plugins.values())
    assert plugins["sd-llm-fast"].type is PluginType.SD and plugins["gs-llm-deep"].type is PluginType.GS
    assert plugins["val-llm"].type is PluginType.VAL
    assert plugins["sd-llm-fast"].model_roles == ("fast",) and plugins["sd-llm-deep"].model_roles == ("deep",)
    assert plugins["gs-llm-fast"].cost_class == "moderate" and plugins["gs-llm-deep"].cost_class == "expensive"
    assert plugins["sd-llm-deep"].planner_hints.preferred_depth == "deep"


# --- refusals: no endpoint, no budget -------------------------------------------------------------


def test_unconfigured_plugins_answer_unsupported_without_a_request(llm_server):
    results = [
        LlmSeedDetector(UNCONFIGURED).detect(ctx()),
        LlmGoalSolver(UNCONFIGURED).solve(ctx(), INTENT, evidence(UNIT_A)),
        LlmValidator(UNCONFIGURED).validate(
            ctx(), INTENT, evidence(UNIT_A), GsResult(status=Status.SUCCESS, answer="x", cited_ids=(UNIT_A,))
        ),
    ]
    assert [(r.status, r.reason, r.llm_calls) for r in results] == [
        (Status.UNSUPPORTED, "no LLM endpoint configured", 0)
    ] * 3
    assert llm_server.received == []


def test_exhausted_budget_answers_unsupported_without_a_request(llm_server, client):
    results = [
        LlmSeedDetector(client, "deep").detect(ctx(calls_left=0)),
        LlmGoalSolver(client, "deep").solve(ctx(calls_left=0), INTENT, evidence(UNIT_A)),
        LlmValidator(client).validate(
            ctx(calls_left=0), INTENT, evidence(UNIT_A), GsResult(status=Status.SUCCESS, answer="x")
        ),
    ]
    assert {(r.status, r.reason) for r in results} == {
        (Status.UNSUPPORTED, "LLM call budget exhausted (budgets.maxLlmCallsPerRequest)")
    }
    assert llm_server.received == []


# --- sd-llm ---------------------------------------------------------------------------------------


def test_sd_good_cnl_is_parsed_into_intents(llm_server, client):
    llm_server.reply(GOOD_CNL)
    result = LlmSeedDetector(client).detect(ctx())
    assert result.status is Status.SUCCESS
    assert result.intent_cnl == GOOD_CNL
    assert [(i.act, i.target, i.output) for i in result.intents] == [(Act.EXPLAIN, "key rotation", "explanation")]
    assert result.llm_calls == 1
    assert result.context_units == ()
    [request] = llm_server.received
    system, user = request.json["messages"]
    assert '@i1 intent <act> "<target>"' in system["content"] and "diagnose" in system["content"]
    assert user == {"role": "user", "content": "How are keys rotated?"}
    assert request.headers["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    "reply", [f"```cnl\n{GOOD_CNL}\n```", f"Here is the Intent CNL:\n```\n{GOOD_CNL}\n```\nHope it helps."]
)
def test_sd_strips_code_fences_and_prose_around_them(llm_server, client, reply):
    llm_server.reply(reply)
    result = LlmSeedDetector(client).detect(ctx())
    assert result.status is Status.SUCCESS and result.intent_cnl == GOOD_CNL


def test_sd_invalid_then_valid_succeeds_after_one_corrective_retry(llm_server, client):
    llm_server.reply(BAD_CNL)
    llm_server.reply(GOOD_CNL)
    result = LlmSeedDetector(client).detect(ctx())
    assert result.status is Status.SUCCESS and result.llm_calls == 2
    assert len(llm_server.received) == 2
    retry = llm_server.received[1].json["messages"]
    assert retry[-2] == {"role": "assistant", "content": BAD_CNL}
    assert "<sd-llm>:1:" in retry[-1]["content"] and "corrected Intent CNL" in retry[-1]["content"]


def test_sd_invalid_twice_is_an_error_with_the_first_validator_error(llm_server, client):
    llm_server.reply(BAD_CNL)
    llm_server.reply(BAD_CNL)
    result = LlmSeedDetector(client).detect(ctx())
    assert result.status is Status.ERROR and result.llm_calls == 2
    assert result.reason.startswith("LLM wrote invalid Intent CNL: <sd-llm>:1:")
    assert len(llm_server.received) == 2


def test_sd_retry_is_skipped_when_the_budget_allows_one_call(llm_server, client):
    llm_server.reply(BAD_CNL)
    result = LlmSeedDetector(client).detect(ctx(calls_left=1))
    assert result.status is Status.ERROR and result.llm_calls == 1
    assert len(llm_server.received) == 1


def test_sd_prose_reply_is_invalid(llm_server, client):
    llm_server.reply("Sure! The user wants to know about key rotation.")
    llm_server.reply("Still prose.")
    result = LlmSeedDetector(client).detect(ctx())
    assert result.status is Status.ERROR and "invalid Intent CNL" in result.reason


def test_sd_timeout_is_an_error(llm_server, client):
    llm_server.reply(GOOD_CNL, delay_s=1.0)
    result = LlmSeedDetector(client).detect(ctx())
    assert result.status is Status.ERROR and "timed out" in result.reason
    assert result.llm_calls == 1


def test_sd_http_500_is_an_error(llm_server, client):
    llm_server.reply_raw(500, b"model overloaded")
    result = LlmSeedDetector(client).detect(ctx())
    assert (result.status, result.reason) == (Status.ERROR, "LLM endpoint returned HTTP 500: model overloaded")


def test_sd_garbage_body_is_an_error(llm_server, client):
    llm_server.reply_raw(200, b"\x00\x01 not json")
    result = LlmSeedDetector(client).detect(ctx())
    assert result.status is Status.ERROR and "non-JSON" in result.reason


def test_sd_depths_differ_in_prompt_and_model(llm_server):
    client = LlmClient(LlmConfig(base_url=llm_server.url, model="small", models={"deep": "large"}))
    llm_server.reply(GOOD_CNL)
    llm_server.reply(GOOD_CNL)
    LlmSeedDetector(client, "fast").detect(ctx())
    LlmSeedDetector(client, "deep").detect(ctx())
    fast, deep = (r.json for r in llm_server.received)
    assert (fast["model"], deep["model"]) == ("small", "large")
    assert fast["messages"][0]["content"] != deep["messages"][0]["content"]


# --- gs-llm ---------------------------------------------------------------------------------------


def test_gs_prompt_carries_only_permitted_evidence_and_citations_are_kept(llm_server, client):
    llm_server.reply(f"Keys rotate every 90 days [{UNIT_A}]; failures page on-call [{UNIT_B}].")
    result = LlmGoalSolver(client).solve(ctx(), INTENT, evidence(UNIT_A, SECRET, UNIT_B))
    assert result.status is Status.SUCCESS and result.llm_calls == 1
    assert result.cited_ids == (UNIT_A, UNIT_B)
    assert result.answer.startswith("Keys rotate every 90 days")
    prompt = llm_server.received[0].prompt
    assert f"[{UNIT_A}] key rotation: Keys are rotated every 90 days" in prompt
    assert f"[{UNIT_B}] rotation alerts:" in prompt
    assert SECRET not in prompt
    assert "How are keys rotated?" in prompt and "ONLY" in prompt


def test_gs_invented_ids_are_dropped(llm_server, client):
    llm_server.reply(f"Keys rotate every 90 days [{UNIT_A}, made::chunk-009::unit-009] [{SECRET}].")
    result = LlmGoalSolver(client).solve(ctx(), INTENT, evidence(UNIT_A, UNIT_B))
    assert result.status is Status.SUCCESS
    assert result.cited_ids == (UNIT_A,)


def test_gs_answer_citing_no_provided_evidence_is_an_error(llm_server, client):
    llm_server.reply("Keys rotate yearly [made::chunk-001::unit-001].")
    result = LlmGoalSolver(client).solve(ctx(), INTENT, evidence(UNIT_A))
    assert (result.status, result.reason) == (Status.ERROR, "LLM answer cites no provided evidence")
    assert result.llm_calls == 1


def test_gs_without_permitted_evidence_is_no_context_and_makes_no_request(llm_server, client):
    for kb in (evidence(), evidence(SECRET)):
        result = LlmGoalSolver(client).solve(ctx(), INTENT, kb)
        assert (result.status, result.llm_calls) == (Status.NO_CONTEXT, 0)
    assert llm_server.received == []


def test_gs_http_error(llm_server, client):
    llm_server.reply_raw(503, b"busy")
    result = LlmGoalSolver(client, "deep").solve(ctx(), INTENT, evidence(UNIT_A))
    assert (result.status, result.reason, result.llm_calls) == (
        Status.ERROR,
        "LLM endpoint returned HTTP 503: busy",
        1,
    )


# --- val-llm --------------------------------------------------------------------------------------

ANSWER = GsResult(status=Status.SUCCESS, answer=f"Keys rotate every 90 days [{UNIT_A}].", cited_ids=(UNIT_A,))


def test_val_accept(llm_server, client):
    llm_server.reply('{"verdict": "accept", "reason": "supported by the unit"}')
    result = LlmValidator(client).validate(ctx(), INTENT, evidence(UNIT_A, UNIT_B), ANSWER)
    assert (result.status, result.reason, result.llm_calls) == (Status.ACCEPTED, "supported by the unit", 1)
    request = llm_server.received[0]
    assert request.json["response_format"] == {"type": "json_object"}
    prompt = request.prompt
    assert ANSWER.answer in prompt and "Keys are rotated every 90 days by the vault job." in prompt
    assert "A failed rotation pages" not in prompt  # only the cited evidence is shown


def test_val_reject(llm_server, client):
    llm_server.reply('```json\n{"verdict": "reject", "reason": "90 days is not stated"}\n```')
    result = LlmValidator(client).validate(ctx(), INTENT, evidence(UNIT_A), ANSWER)
    assert (result.status, result.reason) == (Status.REJECTED, "90 days is not stated")


@pytest.mark.parametrize("reply", ["looks fine to me", '{"verdict": "maybe"}', "[]"])
def test_val_unparseable_verdict_is_an_error(llm_server, client, reply):
    llm_server.reply(reply)
    result = LlmValidator(client).validate(ctx(), INTENT, evidence(UNIT_A), ANSWER)
    assert result.status is Status.ERROR and result.reason.startswith("LLM verdict is not the JSON asked for")
    assert result.llm_calls == 1


def test_val_skips_answers_without_content(llm_server, client):
    result = LlmValidator(client).validate(ctx(), INTENT, evidence(), GsResult(status=Status.NO_CONTEXT))
    assert (result.status, result.llm_calls) == (Status.UNSUPPORTED, 0)
    assert llm_server.received == []


class MemoryView(FakeView):
    def __contains__(self, unit_id: object) -> bool:
        return self.get(str(unit_id)) is not None


def memory_use(record_id: str, question: str, lead: str = "", unit_ids: tuple[str, ...] = (), score: float = 0.5):
    from core.kernel.events import MemoryUse
    from core.memory.cited import cited_digests

    return MemoryUse(
        id=record_id,
        scope="session",
        kind="turn",
        turn=1,
        question=question,
        lead=lead,
        unit_ids=unit_ids,
        unit_digests=cited_digests(VIEW, unit_ids),
        sim=0.5,
        recency=1.0,
        scope_weight=1.0,
        quality=1.0,
        score=score,
    )


def test_memory_is_packed_into_the_prompt_as_the_longest_ranked_prefix_within_budget(llm_server, client):
    view = MemoryView(*VIEW._units.values())
    memory = (
        memory_use("m1", "How often are keys rotated?", "every 90 days", (UNIT_A,)),  # 12 tokens
        memory_use("m2", "Whose pay grade is secret?", "grade 7", (SECRET,)),  # cites a unit not in view
        memory_use("m3", "Who is paged when rotation fails?", "the on-call engineer"),  # 14 tokens
        memory_use("m4", "Short?", "yes"),  # 3 tokens, after one that does not fit
    )
    context = RunContext(
        request=Request(question="And the alerts?", memory=memory), view=view, services=None, llm_calls_left=4
    )
    llm_server.reply(f"They page on-call [{UNIT_A}]")
    result = LlmGoalSolver(client, "fast", memory_budget=20).solve(context, INTENT, evidence(UNIT_A))
    prompt = llm_server.received[0].prompt
    assert "- How often are keys rotated? → every 90 days" in prompt
    assert "pay grade" not in prompt and "grade 7" not in prompt
    assert "on-call engineer" not in prompt and "Short?" not in prompt
    assert result.reason == (
        "memory: 1 of 3 record(s) in the prompt (12/20 tokens); left out: m3, m4; "
        "turn 1 not used: a unit it cited is no longer in your view"
    )


def test_a_record_whose_cited_unit_changed_since_never_reaches_a_prompt(llm_server, client):
    view = MemoryView(*VIEW._units.values())
    stale = memory_use("m1", "How often are keys rotated?", "every 30 days", (UNIT_A,)).model_copy(
        update={"unit_digests": ("0" * 32,)}
    )  # the digest of what the turn read, which UNIT_A no longer says
    context = RunContext(
        request=Request(question="And the alerts?", memory=(stale,)), view=view, services=None, llm_calls_left=4
    )
    llm_server.reply(f"They page on-call [{UNIT_A}]")
    result = LlmGoalSolver(client, "fast", memory_budget=200).solve(context, INTENT, evidence(UNIT_A))
    assert "every 30 days" not in llm_server.received[0].prompt
    assert result.reason == f"memory turn 1 not used: {UNIT_A} has changed since"
