"""The judge: what an answer asserts (its lead), mention checks on the lead only, refusals that
never satisfy a mention, SQuAD normalisation and scores on known pairs, and the new
`expect_answer` / `expect_abstain` fields, through `evaluate` and the queries file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.eval.answer_checks import (
    AnswerVerdict,
    abstained,
    best_scores,
    contains_gold,
    exact_match,
    first_sentence,
    lead_of,
    normalize_answer,
    token_f1,
)
from core.eval.labelled import QuerySpec, evaluate, load_queries
from core.infra.config import ConfigError
from core.kernel.events import AnswerPart, AnswerReady
from core.kernel.session import Session
from mrptui.cli import main
from tests.unit.eval.test_evaluation import LeakySession

CITE = "[kiln-log::chunk-000::unit-003]"


def _ready(status: str, text: str, lead: str = "") -> AnswerReady:
    """An answer as the engine hands it over: one part, with the lead its solver built it with."""
    part = AnswerPart(intent_index=0, target="Q?", answer=text, status=status, lead=lead)
    return AnswerReady(seq=1, answer=text, status=status, parts=(part,))


@pytest.mark.parametrize(
    ("lead", "text"),
    [
        ("Mabel Orr", f"Mabel Orr, because: Mabel Orr fired the second kiln at dawn {CITE}."),
        ("No", f"No, because: the glaze did not craze {CITE}. The potter said yes to the order {CITE}."),
        # A lead that quotes its sentence keeps the words, not the citation.
        (f"The kiln cracked {CITE}", f"The kiln cracked {CITE}, because: the damper stuck {CITE}."),
    ],
)
def test_the_lead_is_the_one_the_answer_was_built_with(lead: str, text: str) -> None:
    assert lead_of(_ready("grounded", text, lead)) == lead.removesuffix(f" {CITE}")


def test_an_answer_in_several_parts_leads_with_its_first_line() -> None:
    parts = tuple(
        AnswerPart(intent_index=i, target=t, answer=f"{t}, because: …", status="grounded", lead=t)
        for i, t in enumerate(("Mabel Orr", "Cone 6"))
    )
    text = "1. Who fired it?\n   Mabel Orr, because: …\n2. What cone?\n   Cone 6, because: …"
    assert lead_of(AnswerReady(seq=1, answer=text, status="grounded", parts=parts)) == "1."


@pytest.mark.parametrize(
    ("answer", "lead"),
    [
        # An answer without a lead: the first sentence, and an initial or "Dr." is not a sentence end.
        (f"Dr. Ansel K. Brant glazed the urns. He used ash {CITE}.", "Dr. Ansel K. Brant glazed the urns."),
        ("The U.S. buyer took 40 bowls. The rest stayed.", "The U.S. buyer took 40 bowls."),
        # The insufficient-evidence preface goes; only the first line counts.
        (
            f"The evidence is insufficient to answer fully; the closest units say: Slip is thinned clay {CITE}.\nslip: more",
            "Slip is thinned clay.",
        ),
        ("Cone 6\nglaze: matte", "Cone 6"),
    ],
)
def test_an_answer_without_a_lead_leads_with_its_first_sentence(answer: str, lead: str) -> None:
    assert first_sentence(answer) == lead
    assert lead_of(_ready("grounded", answer)) == lead


def _verdict(status: str, answer: str, lead: str = "", **checks: object) -> AnswerVerdict:
    query = QuerySpec.model_validate(
        {"id": "k", "question": "Q?", "expect_evidence": [], "must_not_appear": [], **checks}
    )
    return AnswerVerdict(query, _ready(status, answer, lead))


def test_a_cannot_tell_answer_never_satisfies_a_mention() -> None:
    refusal = (
        'The evidence is insufficient to answer: cannot tell from the evidence whether the answer to "Did the kiln '
        f'crack?" is yes or no. The closest evidence says: The kiln cracked at dawn {CITE}.'
    )
    verdict = _verdict("weak", refusal, expect_answer_mentions=["yes"])
    assert verdict.lead == ""
    assert verdict.problems == ("an abstaining answer does not mention yes",)
    # The same words, grounded, still abstain: the refusal phrase decides.
    assert _verdict("grounded", refusal, expect_answer_mentions=["cracked"]).problems
    assert _verdict(
        "no-context",
        "I found no evidence in the knowledge base for this question.",
        expect_answer_mentions=["evidence"],
    ).problems


def test_a_word_in_the_quoted_evidence_is_not_a_mention() -> None:
    answer = f"No, because: the buyer from Tarrow refused the bowls {CITE}."
    assert _verdict("grounded", answer, "No", expect_answer_mentions=["Tarrow"]).problems == (
        "the lead does not mention Tarrow",
    )
    assert (
        _verdict(
            "grounded", answer, "No", expect_answer_mentions=["no"], expect_answer_excludes=["yes", "Tarrow"]
        ).problems
        == ()
    )


def test_mentions_are_whole_words_in_any_case() -> None:
    assert _verdict("grounded", "Nobody fired it.", expect_answer_mentions=["No"]).problems
    assert not _verdict("grounded", "no, it was not fired.", expect_answer_mentions=["No"]).problems
    assert _verdict("grounded", "YES", expect_answer_excludes=["yes"]).problems == ("the lead mentions excluded yes",)


def test_expect_answer_scores_the_lead_by_squad_f1() -> None:
    right = _verdict(
        "grounded", f"Lady Mabel Orr, because: … {CITE}", "Lady Mabel Orr", expect_answer=["Mabel Orr", "Orr"]
    )
    assert (right.em, round(right.f1, 3), right.problems) == (0, 0.8, ())
    exact = _verdict("grounded", "the Mabel Orr.", expect_answer=["Mabel Orr"])
    assert (exact.em, exact.f1) == (1, 1.0)
    long = _verdict(
        "grounded", "Mabel Orr fired the second kiln at dawn with ash from the orchard.", expect_answer=["Mabel Orr"]
    )
    assert long.f1 < 0.5 and "scores F1" in long.problems[0]
    refused = _verdict("weak", "The evidence is insufficient to answer: Mabel Orr.", expect_answer=["Mabel Orr"])
    assert (refused.em, refused.f1) == (0, 0.0)


def test_expect_abstain_needs_a_status_other_than_grounded_and_words_that_say_so() -> None:
    assert (
        _verdict(
            "no-context", "I found no evidence in the knowledge base for this question.", expect_abstain=True
        ).problems
        == ()
    )
    weak_quote = "The closest unit says the kiln was cold."
    assert _verdict("weak", weak_quote, expect_abstain=True).problems == (
        "expected to abstain, came back weak without saying it cannot tell",
    )
    assert _verdict("grounded", "Yes, because: it was.", "Yes", expect_abstain=True).problems


@pytest.mark.parametrize(
    ("gold", "prediction", "em", "f1"),
    [
        # Pairs worked by hand with the official SQuAD v2.0 evaluation's rules.
        ("the Normans", "Normans", 1, 1.0),
        ("in the 10th century", "10th century!", 0, 0.8),
        ("Denmark, Iceland and Norway", "Norway", 0, 0.4),  # P 1, R 1/4
        ("1,000 kilns", "1000 kilns", 1, 1.0),
        ("", "", 1, 1.0),
        ("", "anything", 0, 0.0),
    ],
)
def test_squad_scores_on_known_pairs(gold: str, prediction: str, em: int, f1: float) -> None:
    assert exact_match(gold, prediction) == em
    assert token_f1(gold, prediction) == pytest.approx(f1)


def test_squad_normalisation_and_gold_lists() -> None:
    assert normalize_answer("  The  Kiln's  A-frame, an arch!") == "kilns aframe arch"
    # A no-answer question's gold list is [""]: abstaining (empty prediction) scores 1.
    assert best_scores([], "") == (1, 1.0)
    assert best_scores(["Orr", "Mabel Orr"], "Mabel Orr") == (1, 1.0)
    assert contains_gold(f"It was fired in 1249–1314 {CITE}.", ["1249"])
    assert not contains_gold("It holds 1000 pots.", ["10"])
    assert abstained("grounded", "… cannot tell from the evidence …") and not abstained("grounded", "Yes.")


# --- through evaluate and the queries file ------------------------------------------------------

KB = """## Context Unit kiln::chunk-000::unit-000
Role: Definition
Topic: Bisque firing
Claim: Bisque firing is the first, low firing of raw clay before glazing.

## Context Unit kiln::chunk-000::unit-001
Role: Constraint
Topic: Kiln key
Claim: The kiln room key code is 4471.
Acl: potters
"""
SECRET = "kiln::chunk-000::unit-001"


@pytest.fixture
def kiln_kb(tmp_path: Path) -> Path:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "kiln.md").write_text(KB, encoding="utf-8")
    return tmp_path / "kb"


def test_evaluate_reports_lead_and_squad_scores_per_type(kiln_kb: Path) -> None:
    query = QuerySpec.model_validate(
        {
            "id": "b1",
            "question": "What is bisque firing?",
            "expect_evidence": [],
            "must_not_appear": [],
            "expect_answer": ["the first, low firing of raw clay"],
            "type": "definition",
        }
    )
    text = f"The first low firing of raw clay, because: … {CITE}"
    lead = "The first low firing of raw clay"
    part = AnswerPart(intent_index=0, target=query.question, answer=text, status="grounded", lead=lead)
    answer = AnswerReady(seq=99, status="grounded", answer=text, parts=(part,))
    report = evaluate(LeakySession(Session.open([kiln_kb]), answer), [query], ["kb-fast"])
    result = report.queries[0]
    assert (result.lead, result.answer_em, result.answer_f1) == ("The first low firing of raw clay", 1, 1.0)
    checks = report.answers_for("weighted", "definition")
    assert (checks.checked, checks.scored, checks.answer_em, checks.answer_f1, checks.failures) == (1, 1, 1.0, 1.0, {})


def _write(path: Path, queries: list[dict]) -> Path:
    path.write_text(json.dumps(queries, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"expect_abstain": True, "expect_status": "grounded"}, 'expect_abstain contradicts expect_status "grounded"'),
        ({"expect_abstain": True, "expect_answer": ["Orr"]}, "expect_abstain contradicts expect_answer"),
        ({"expect_abstain": "sometimes"}, "expect_abstain: Input should be a valid boolean"),
        ({"expect_answer": ["  "]}, "expect_answer[0]: String should have at least 1 character"),
    ],
)
def test_bad_new_fields_are_exit_two_with_file_and_line(tmp_path: Path, capsys, fields: dict, message: str) -> None:
    good = {"id": "a", "question": "Q?", "expect_evidence": [], "must_not_appear": []}
    path = _write(tmp_path / "q.json", [good, good | {"id": "b"} | fields])
    assert main(["eval", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    with pytest.raises(ConfigError) as raised:
        load_queries(path)
    # The second query's element starts on line 8 of the indented file; its field below that.
    assert raised.value.diagnostics[0].line >= 8


# --- #23 item 4: eval must not reveal that a restricted id exists --------------------------------


@pytest.mark.parametrize("typed", [SECRET.upper(), "Kiln::Chunk-000::Unit-001"])
def test_a_restricted_id_typed_in_another_case_reads_like_an_absent_one(kiln_kb: Path, typed: str) -> None:
    session = Session.open([kiln_kb])

    def verdict(question_id: str) -> tuple[bool, dict]:
        query = QuerySpec.model_validate(
            {"id": "t", "question": f"What does {question_id} say?", "expect_evidence": [], "must_not_appear": []}
        )
        report = evaluate(session, [query], ["kb-fast", "kb-thinkingdb"])
        return report.safe, report.gate("view-boundary").failures

    absent = verdict("KILN::CHUNK-000::UNIT-009")
    assert absent == (True, {})
    # Echoed lower-cased in query terms, the typed secret id must not fail the gate either.
    assert verdict(typed) == absent


def test_ids_found_in_any_case_are_still_leaks_in_id_fields(kiln_kb: Path) -> None:
    session = Session.open([kiln_kb])
    query = QuerySpec.model_validate(
        {"id": "t", "question": f"What does {SECRET.upper()} say?", "expect_evidence": [], "must_not_appear": []}
    )
    cited = AnswerReady(seq=99, answer="The code is 4471.", status="grounded", evidence_ids=(SECRET,))
    report = evaluate(LeakySession(session, cited), [query], ["kb-fast"])
    assert report.gate("view-boundary").failures == {"t": f"{SECRET} in event 99 answer_ready"}


def test_a_grounded_answer_to_an_abstain_question_fails_the_abstention_gate(kiln_kb: Path) -> None:
    query = QuerySpec.model_validate(
        {
            "id": "n1",
            "question": "Who glazed the bisque urns?",
            "expect_evidence": [],
            "must_not_appear": [],
            "expect_abstain": True,
        }
    )
    grounded = AnswerReady(seq=99, status="grounded", answer="Mabel Orr, because: she did.")
    report = evaluate(LeakySession(Session.open([kiln_kb]), grounded), [query], ["kb-fast"])
    assert report.gate("abstention").failures == {"n1": "expected to abstain, came back grounded"}
    assert not report.safe


def test_the_cli_prints_lead_scores_per_type(kiln_kb: Path, tmp_path: Path, capsys) -> None:
    queries = _write(
        tmp_path / "q.json",
        [
            {
                "id": "b1",
                "question": "What is bisque firing?",
                "expect_evidence": [],
                "must_not_appear": [],
                "expect_answer": ["the first, low firing of raw clay before glazing"],
                "type": "definition",
            }
        ],
    )
    assert main(["eval", str(queries), "--kb", str(kiln_kb), "--kb-plugin", "kb-fast"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| definition | weighted |"))
    # One query scored: its lead's EM and F1 (whatever the engine answers) with the count.
    assert row.split(" | ")[3].endswith("(1)")
