"""Answer accuracy per question type on the sets written for this repo, unlike sample_kb,
answered with no LLM: the foreign set (evalsets/foreign: three narratives and a fact-chain KB)
and the held-out set (evalsets/heldout: a ship's log, a school board's minutes and a festival
fact KB, written after the answer forms and before any change made for them).

The floors sit a little under what was measured (docs/evaluation.md), so a regression in any
answer form fails here; the safety gates must hold on every query.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from core.eval.labelled import evaluate, load_queries
from core.eval.labelled_report import EvalReport
from core.kernel.session import Session
from tests.support.eval_checks import assert_weak_answers_say_so

ROOT = Path(__file__).resolve().parents[3]
SETS = {"foreign": ROOT / "evalsets" / "foreign", "heldout": ROOT / "evalsets" / "heldout"}
FUSIONS = ["weighted", "rrf"]

# (set, fusion, type, floor). Measured with the answer checks judging the lead (the short answer
# before "because"; docs/evaluation.md): foreign 19/32 and held-out 7/21 under each fusion
# (31/32 and 16/21 when a word anywhere in the answer passed). Types whose leads all fail today
# (comparison and multi_hop in both sets; entity and list in the held-out set) have no floor yet.
# With the support check (core/answer/support.py) foreign is 18/32: "Who opposed the railway line?"
# (v3) now says it cannot tell, since the sentence naming the opponent says "opposed it" and
# "it" is resolved only to names, not to "a railway line" a sentence before. Since a chain
# answering "why" leads with its steps (docs/answers.md), foreign is 23/32 (multi_hop 5/6) and
# held-out 8/21 (multi_hop 1/4); since a comparison leads with its sides' contrast, 25/32
# (comparison 2/3) and 9/21 (comparison 1/2).
FLOORS = [
    *(("foreign", fusion, "all", 0.78) for fusion in FUSIONS),
    *(("foreign", fusion, "comparison", 0.66) for fusion in FUSIONS),
    *(("heldout", fusion, "comparison", 0.5) for fusion in FUSIONS),
    *(("foreign", fusion, "multi_hop", 0.83) for fusion in FUSIONS),
    *(("heldout", fusion, "multi_hop", 0.25) for fusion in FUSIONS),
    *(("foreign", fusion, "entity", 0.83) for fusion in FUSIONS),
    *(("foreign", fusion, kind, 1.0) for fusion in FUSIONS for kind in ("cannot_tell", "abstention")),
    *(("foreign", fusion, "yes_no", 0.83) for fusion in FUSIONS),
    *(("foreign", fusion, "list", 0.66) for fusion in FUSIONS),
    *(("foreign", fusion, "explanation", 0.33) for fusion in FUSIONS),
    *(("heldout", fusion, "all", 0.42) for fusion in FUSIONS),
    *(("heldout", fusion, kind, 1.0) for fusion in FUSIONS for kind in ("cannot_tell", "abstention")),
    *(("heldout", fusion, "yes_no", 0.74) for fusion in FUSIONS),
    *(("heldout", fusion, "explanation", 0.5) for fusion in FUSIONS),
]
COUNTS = {
    "foreign": {
        "all": 32,
        "yes_no": 6,
        "entity": 6,
        "list": 3,
        "explanation": 3,
        "comparison": 3,
        "cannot_tell": 3,
        "multi_hop": 6,
        "abstention": 2,
    },
    "heldout": {
        "all": 21,
        "yes_no": 4,
        "entity": 4,
        "list": 2,
        "explanation": 2,
        "comparison": 2,
        "cannot_tell": 2,
        "multi_hop": 4,
        "abstention": 1,
    },
}


@cache
def report(name: str) -> EvalReport:
    folder = SETS[name]
    return evaluate(Session.open([folder]), load_queries(folder / "queries.json"), ["kb-balanced"], FUSIONS)


@pytest.mark.parametrize("name", SETS)
def test_the_set_has_every_question_type(name: str) -> None:
    counts = {a.type: a.checked for a in report(name).answers if a.fusion == "weighted"}
    assert counts == COUNTS[name]
    assert report(name).unknown_ids == {}


@pytest.mark.parametrize("fusion", FUSIONS)
@pytest.mark.parametrize("name", SETS)
def test_no_restricted_unit_reaches_any_output(name: str, fusion: str) -> None:
    for gate in ("must-not-appear", "view-boundary", "abstention"):
        assert report(name).gate(gate, fusion).failures == {}, gate


@pytest.mark.parametrize(("name", "fusion", "kind", "floor"), FLOORS)
def test_answer_accuracy_stays_above_its_floor(name: str, fusion: str, kind: str, floor: float) -> None:
    checks = report(name).answers_for(fusion, kind)
    assert checks.rate >= floor, checks.failures


@pytest.mark.parametrize("name", SETS)
def test_no_question_of_the_block_became_evidence(name: str) -> None:
    # Every story ends in a question block; had it been read, a question would retrieve itself.
    # The held-out blocks are titled without the word "questions" ("QUERIES FROM …" over
    # (a)…(h); "Points the clerk must confirm …:" over Q-1.…Q-8.).
    session = Session.open([SETS[name]])
    questions = {q.question.split("?")[0] for q in load_queries(SETS[name] / "queries.json")}
    claims = [u.claim or "" for u in session.kb.units]
    assert not any(q in claim for q in questions for claim in claims)
    assert not any("QUERIES FROM" in claim or "Points the clerk" in claim for claim in claims)


@pytest.mark.parametrize("name", SETS)
def test_status_matches_words(name: str) -> None:
    assert_weak_answers_say_so(report(name))
