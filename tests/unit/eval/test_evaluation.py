"""Evaluation gates on the sample KB's labelled queries, and proof that the gates can fail.

The sample run is evaluated once per module (every kb plugin, weighted and RRF fusion); the
floors sit a little under what was measured, so a retrieval regression fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.eval.labelled import QuerySpec, evaluate, load_queries, with_fusion
from core.eval.labelled_report import EvalReport
from core.eval.sightings import IdFinder
from core.infra.config import ConfigError, FusionMethod, load_retrieval_config
from core.kernel.contract import RegistryError
from core.kernel.events import AnswerReady, Validated
from core.kernel.session import Session
from mrptui.cli import main
from mrptui.commands.eval import markdown
from tests.support.eval_checks import assert_weak_answers_say_so

ROOT = Path(__file__).resolve().parents[3]
QUERIES = ROOT / "sample_kb" / "queries.json"
PLUGINS = ["kb-fast", "kb-balanced", "kb-thinkingdb"]
FUSIONS = ["weighted", "rrf"]


@pytest.fixture(scope="module")
def report() -> EvalReport:
    return evaluate(Session.open(), load_queries(QUERIES), PLUGINS, FUSIONS, author_view=True)


# --- the sample KB ------------------------------------------------------------------------------


def test_every_labelled_id_exists_in_the_sample_kb(report: EvalReport) -> None:
    # An unknown must_not_appear id would make the safety gate pass without checking anything.
    assert report.unknown_ids == {} and report.absent_ids == {}
    assert len({q.id for q in report.queries}) == 63


def test_the_author_view_says_it_looked_at_the_whole_kb_when_no_id_is_absent(report: EvalReport) -> None:
    text = markdown(report)
    assert "## Author view: whole KB. Labelled ids no KB file holds (their checks pass vacuously)\n\n- none" in text
    assert "Author view" not in markdown(report.model_copy(update={"absent_ids": None}))


@pytest.mark.parametrize("fusion", FUSIONS)
@pytest.mark.parametrize("gate", ["must-not-appear", "view-boundary"])
def test_no_restricted_or_labelled_id_reaches_any_event_or_candidate_list(report, gate, fusion) -> None:
    result = report.gate(gate, fusion)
    assert result.checked == 63
    assert result.failures == {}


@pytest.mark.parametrize("fusion", FUSIONS)
def test_unanswerable_and_hidden_code_questions_never_come_back_grounded(report, fusion) -> None:
    result = report.gate("abstention", fusion)
    assert result.checked == 6  # q49, q50 (hidden codes), q60-q63 (unanswerable)
    assert result.failures == {}
    assert report.safe


# (plugin, fusion, kind, metric, floor); measured values in the comments and in docs/evaluation.md.
FLOORS = [
    ("kb-fast", "weighted", "all", "recall_at_k", 0.82),  # 0.862
    ("kb-fast", "weighted", "all", "mrr", 0.90),  # 0.938
    ("kb-fast", "weighted", "procedure", "recall_at_1", 0.95),  # 1.000
    ("kb-fast", "weighted", "paraphrase", "recall_at_k", 0.95),  # 1.000
    ("kb-balanced", "weighted", "all", "recall_at_k", 0.90),  # 0.939
    ("kb-balanced", "weighted", "all", "mrr", 0.90),  # 0.947
    ("kb-balanced", "weighted", "exact-code", "recall_at_k", 0.95),  # 1.000
    ("kb-balanced", "weighted", "multi-hop", "recall_at_k", 0.65),  # 0.722
    ("kb-balanced", "rrf", "all", "recall_at_k", 0.90),  # 0.949
    ("kb-thinkingdb", "weighted", "all", "recall_at_k", 0.97),  # 1.000
    ("kb-thinkingdb", "weighted", "all", "recall_at_1", 0.75),  # 0.774 (0.411 before role-ordered unit scores)
    ("kb-thinkingdb", "weighted", "all", "mrr", 0.90),  # 0.944
    ("kb-thinkingdb", "rrf", "all", "recall_at_k", 0.97),  # 1.000
    ("kb-thinkingdb", "weighted", "multi-hop", "recall_at_k", 0.97),  # 1.000
    ("kb-thinkingdb", "weighted", "multi-hop", "mrr", 0.95),  # 1.000
    ("kb-thinkingdb", "weighted", "exact-code", "recall_at_k", 0.95),  # 1.000
    ("kb-thinkingdb", "rrf", "multi-hop", "recall_at_k", 0.97),  # 1.000
]


@pytest.mark.parametrize(("plugin", "fusion", "kind", "metric", "floor"), FLOORS)
def test_recall_stays_above_its_measured_floor(report, plugin, fusion, kind, metric, floor) -> None:
    row = report.recall_for(plugin, fusion, kind)
    assert row.count > 0
    assert getattr(row, metric) >= floor


def test_only_the_thinkingdb_lane_keeps_whole_proof_chains(report) -> None:
    multi_hop = {p: report.recall_for(p, "weighted", "multi-hop").recall_at_k for p in PLUGINS}
    assert multi_hop["kb-thinkingdb"] > multi_hop["kb-balanced"] > multi_hop["kb-fast"]


@pytest.mark.parametrize("fusion", FUSIONS)
def test_answer_checks_pass_rate(report, fusion) -> None:
    answers = next(a for a in report.answers if a.fusion == fusion)
    assert answers.checked == 48
    # 42/48 under each fusion with the checks judging the lead (47/48 when a word anywhere in the
    # answer passed); 32/48 while a chain answering "why" led by restating the question.
    assert answers.rate >= 0.87


def test_recall_is_scored_only_on_queries_that_expect_evidence(report) -> None:
    assert report.recall_for("kb-fast").count == 55
    assert "unanswerable" not in report.kinds()


# --- the gates can fail -------------------------------------------------------------------------

TINY_KB = """# Tiny KB

## Context Unit tiny::chunk-000::unit-000
SourceId: tiny
ChunkId: tiny::chunk-000
Role: Definition
Title: Zephyr gateway
Topic: Zephyr gateway
Claim: Zephyr is the gateway that routes partner traffic to the billing service.
UtilityActs: define, describe

## Context Unit tiny::chunk-000::unit-001
SourceId: tiny
ChunkId: tiny::chunk-000
Role: Explanation
Title: Zephyr gateway
Topic: Zephyr retries
Claim: Zephyr retries a failed partner request three times before it gives up.
UtilityActs: explain

## Context Unit tiny::chunk-001::unit-002
SourceId: tiny
ChunkId: tiny::chunk-001
Role: Explanation
Title: Zephyr operations
Topic: Zephyr master token
Claim: The Zephyr master token is rotated every Monday by the gateway operators.
UtilityActs: explain
Acl: ops:secret
"""
DEFINITION = "tiny::chunk-000::unit-000"
SECRET = "tiny::chunk-001::unit-002"


@pytest.fixture
def tiny_kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "units.md").write_text(TINY_KB, encoding="utf-8")
    return folder


def _write_queries(path: Path, queries: list[dict]) -> Path:
    path.write_text(json.dumps(queries, indent=2), encoding="utf-8")
    return path


def _query(**fields) -> dict:
    base = {
        "id": "t1",
        "question": "What is the Zephyr gateway?",
        "expect_evidence": [DEFINITION],
        "must_not_appear": [],
    }
    return base | fields


def test_a_labelled_id_that_is_retrieved_fails_the_gate_and_the_cli(tiny_kb, tmp_path, capsys) -> None:
    # The definition is visible and retrieved; labelling it must-not-appear simulates a leak.
    queries = _write_queries(tmp_path / "q.json", [_query(must_not_appear=[DEFINITION])])
    report = evaluate(Session.open([tiny_kb]), load_queries(queries), ["kb-fast"])
    gate = report.gate("must-not-appear")
    assert not gate.passed and not report.safe
    assert set(gate.failures) == {"t1"}
    assert f"{DEFINITION} in kb-fast candidates" in gate.failures["t1"]
    assert "retrieval_scored" in gate.failures["t1"]
    assert report.gate("view-boundary").passed

    code = main(["eval", str(queries), "--kb", str(tiny_kb), "--kb-plugin", "kb-fast"])
    out = capsys.readouterr().out
    assert code == 1
    assert "| must-not-appear | weighted | 1 | FAIL | t1 |" in out


class LeakySession:
    """A session whose trace ends with one extra event, as a broken engine's might."""

    def __init__(self, inner: Session, extra: object):
        self._inner = inner
        self._extra = extra

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def run(self, request) -> Iterator[object]:
        yield from self._inner.run(request)
        yield self._extra


def test_an_unlabelled_leak_outside_the_callers_view_fails_the_view_gate(tiny_kb) -> None:
    leak = Validated(seq=99, plugin="val-leaky", status="accepted", reason=f"checked against {SECRET}.")
    report = evaluate(LeakySession(Session.open([tiny_kb]), leak), [QuerySpec.model_validate(_query())], ["kb-fast"])
    assert report.gate("must-not-appear").passed  # no label names the secret unit
    assert report.gate("view-boundary").failures == {"t1": f"{SECRET} in event 99 validated"}


def test_typing_a_hidden_id_is_not_a_leak_but_citing_it_is(tiny_kb) -> None:
    # The question's words are echoed in query terms and reasons; that shows the caller nothing.
    typed = QuerySpec.model_validate(_query(question=f"What does {SECRET} say?", expect_evidence=[]))
    session = Session.open([tiny_kb])
    assert evaluate(session, [typed], ["kb-fast", "kb-thinkingdb"]).safe

    cited = AnswerReady(seq=99, answer="The token is rotated weekly.", status="grounded", evidence_ids=(SECRET,))
    report = evaluate(LeakySession(session, cited), [typed], ["kb-fast"])
    assert report.gate("view-boundary").failures == {"t1": f"{SECRET} in event 99 answer_ready"}


def test_the_secret_unit_is_evidence_for_a_caller_who_may_see_it(tiny_kb) -> None:
    query = QuerySpec.model_validate(
        _query(
            question="Zephyr master token",
            expect_evidence=[SECRET],
            caller={"tags": ["ops:secret"]},
            expect_status="grounded",
        )
    )
    report = evaluate(Session.open([tiny_kb]), [query], ["kb-fast"])
    assert report.safe
    assert report.recall_for("kb-fast").recall_at_1 == 1.0
    assert report.answers[0].failures == {}


def test_answer_checks_report_status_and_missing_mentions(tiny_kb) -> None:
    query = QuerySpec.model_validate(_query(expect_status="no-context", expect_answer_mentions=["billing", "invoices"]))
    report = evaluate(Session.open([tiny_kb]), [query], ["kb-fast"])
    expected = "status grounded, expected no-context; the lead does not mention invoices"
    assert report.answers[0].failures == {"t1": expected}
    # A grounded answer where no-context was expected is also an abstention failure.
    assert set(report.gate("abstention").failures) == {"t1"}


def test_metrics_follow_candidate_ranks_and_kept_evidence(tiny_kb) -> None:
    # kb-fast ranks the definition first and the retry unit second; both are kept.
    expected = [DEFINITION, "tiny::chunk-000::unit-001", "tiny::absent"]
    query = QuerySpec.model_validate(_query(question="Zephyr gateway retries", expect_evidence=expected))
    run = evaluate(Session.open([tiny_kb]), [query], ["kb-fast"]).queries[0].retrieval[0]
    ranks = [run.ranks[uid] for uid in query.expect_evidence]
    assert sorted(r for r in ranks if r) == [1, 2] and ranks[2] is None
    assert run.recall_at_1 == pytest.approx(1 / 3)
    assert run.recall_at_3 == pytest.approx(2 / 3)
    assert run.recall_at_k == pytest.approx(2 / 3)
    assert run.reciprocal_rank == 1.0


def test_rrf_runs_on_a_sibling_session_with_only_the_fusion_method_changed(tiny_kb, tmp_path, capsys) -> None:
    config = load_retrieval_config()
    rrf = with_fusion(config, FusionMethod.RRF)
    assert rrf.fusion.method is FusionMethod.RRF
    assert rrf.model_dump(exclude={"fusion"}) == config.model_dump(exclude={"fusion"})

    queries = _write_queries(tmp_path / "q.json", [_query()])
    code = main(["eval", str(queries), "--kb", str(tiny_kb), "--fusion", "both", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["safe"] is True
    assert data["fusion_methods"] == ["weighted", "rrf"]
    assert {(g["gate"], g["fusion"]) for g in data["gates"]} == {
        (gate, fusion) for gate in ("must-not-appear", "view-boundary", "abstention") for fusion in FUSIONS
    }


def test_unknown_kb_plugin_is_a_registry_error(tiny_kb) -> None:
    with pytest.raises(RegistryError, match="kb-nope"):
        evaluate(Session.open([tiny_kb]), [QuerySpec.model_validate(_query())], ["kb-nope"])


def test_id_finder_matches_whole_ids_only() -> None:
    finder = IdFinder(["a::chunk-000::unit-1"])
    assert finder.find('"a::chunk-000::unit-1" and a::chunk-000::unit-1.') == {"a::chunk-000::unit-1"}
    assert finder.find("a::chunk-000::unit-10 xa::chunk-000::unit-1") == set()
    assert IdFinder([]).find("anything") == set()


# --- bad queries files --------------------------------------------------------------------------

GOOD = '{"id": "a", "question": "What is Zephyr?", "expect_evidence": [], "must_not_appear": []}'
SECOND = '{"id": "b", "question": "x", "expect_evidence": [], "must_not_appear": [],'


def _array(*elements: str) -> str:
    """A queries file with one element per line (from line 2), so positions are easy to read."""
    return "[\n  " + ",\n  ".join(elements) + "\n]"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            _array(GOOD, '{"id": "b", "question": "x",\n   "expect_evidence": []}'),
            ":3:3:",
            "[1].must_not_appear: Field required",
        ),
        (
            _array(GOOD, SECOND + '\n   "expect_status": "maybe"}'),
            ":4:4:",
            "[1].expect_status: Input should be 'grounded'",
        ),
        (
            _array(GOOD.replace("must_not_appear", "must_not_apear")),
            ":2:",
            "must_not_apear: Extra inputs are not permitted; did you mean 'must_not_appear'?",
        ),
        (
            _array(GOOD.replace('"question"', '"caller": {"regoin": "EU"}, "question"')),
            ":2:",
            "[0].caller.regoin: Extra inputs are not permitted; did you mean 'region'?",
        ),
        (
            _array(GOOD.replace("What is Zephyr?", "   ")),
            ":2:",
            "[0].question: String should have at least 1 character",
        ),
        (_array(GOOD, GOOD), ":3:4:", "duplicate query id 'a' (first on line 2)"),
        (_array('{"id": "a",\n   "question": }'), ":3:16:", "INVALID_JSON"),
        ('{"id": "a"}', ":1:1:", "<root>: Input should be a valid list"),
    ],
)
def test_bad_queries_file_is_exit_two_with_file_and_line(tmp_path, capsys, text, where, message) -> None:
    path = tmp_path / "queries.json"
    path.write_text(text, encoding="utf-8")
    code = main(["eval", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path}{where}" in err
    assert message in err
    assert "Traceback" not in err
    with pytest.raises(ConfigError):
        load_queries(path)


def test_missing_queries_file_is_exit_two(tmp_path, capsys) -> None:
    assert main(["eval", str(tmp_path / "none.json")]) == 2
    assert "FILE_UNREADABLE" in capsys.readouterr().err


def test_every_weak_answer_says_so_and_no_other_does(report: EvalReport) -> None:
    # Status matches words on every sample question, plugin pinning aside, under both fusions.
    assert_weak_answers_say_so(report)
