"""The answerability instrument: lead features (core/support.lead_features) on sentences written
for this test, the observer hook of the short answer, and the fitting and replay of
scripts/train_answerability.py on numbers written for it."""

from __future__ import annotations

import numpy as np

from core.answer import answerability
from core.answer.answerability import FEATURES
from core.answer.short_answer import short_draft
from core.answer.support import lead_features
from core.nlp.tagging import tag_text
from core.question import Question
from core.question.answer_types import expected_type
from core.question.typed_spans import typed_spans
from core.units import KnowledgeUnit, Role
from scripts.train_answerability import by_check, by_model, choose_threshold, fit, folds, replay, weigh


def features_of(question: str, sentence: str, lead: str, paragraph: str = "") -> dict[str, float]:
    tokens = tag_text(sentence)
    expected = expected_type(question)
    span = next(s for s in typed_spans(tokens, sentence, expected) if s.text == lead)
    return lead_features(Question(question), expected, tokens, span, (), paragraph.split())


def test_lead_features_name_every_feature_and_count_what_is_unsaid() -> None:
    said = features_of(
        "When did the keeper repaint the brass lantern?", "The keeper repainted the brass lantern in 1911.", "1911"
    )
    assert set(said) == set(FEATURES)
    assert said["share"] == 1.0 and said["all_said"] == 1.0 and said["unsaid"] == 0.0 and said["type_date"] == 1.0
    # "repaint" unsaid: a verb; the unit's other sentence says it.
    unsaid = features_of(
        "When did the keeper repaint the brass lantern?",
        "The keeper polished the brass lantern in 1911.",
        "1911",
        paragraph="The keeper polished the brass lantern in 1911. He repainted it in 1920.",
    )
    assert unsaid["share"] == 0.75 and unsaid["unsaid"] == 1.0
    assert unsaid["unsaid_verb"] == 1.0 and unsaid["unsaid_in_paragraph"] == 1.0 and unsaid["unsaid_exact"] == 0.0


def test_an_unsaid_name_counts_as_exact() -> None:
    found = features_of(
        "When did the Rookwood chess club win its first trophy?",
        "The Ashby chess club won its first trophy in 1987.",
        "1987",
    )
    assert found["unsaid_exact"] == 1.0 and found["all_said"] == 0.0


def _unit(n: int, text: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=f"log::c::u{n}", source_id="log", chunk_id="c", role=Role.EXPLANATION, topic="log", claim=text
    )


def test_observers_see_every_lead_weighed_and_the_answer_does_not_change() -> None:
    question = "Who repainted the brass lantern?"
    units = [
        _unit(0, "Ada Brenner repainted the brass lantern in May."),
        _unit(1, "Tomas Vey polished the brass lantern."),
    ]
    alone = short_draft(Question(question), expected_type(question), units)
    seen: list = []
    answerability.OBSERVERS.append(lambda q, candidates: seen.append((q, list(candidates))))
    try:
        observed = short_draft(Question(question), expected_type(question), units)
    finally:
        answerability.OBSERVERS.clear()
    assert observed == alone and observed is not None and observed[0].text.startswith("Ada Brenner, because:")
    ((asked, candidates),) = seen
    assert asked == question
    leads = {c.lead: c for c in candidates}
    assert leads["Ada Brenner"].supported and leads["Ada Brenner"].top
    # The next-best sentence is measured, never answered from.
    assert "Tomas Vey" in leads and not leads["Tomas Vey"].top and not leads["Tomas Vey"].supported


def test_fit_learns_the_feature_that_separates_the_labels() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x[:, 1] > 0).astype(float)
    fitted = fit(x, y)
    assert fitted["weights"][1] > 3 * max(abs(fitted["weights"][0]), abs(fitted["weights"][2]))


def _row(article: str, impossible: bool, share: float, f1: float) -> dict:
    x = {name: 0.0 for name in FEATURES} | {"share": share}
    lead = {"lead": "x", "f1": f1, "rules": True, "supported": share >= 0.81, "top": True, "x": x}
    return {
        "id": f"{article}-{share}-{impossible}",
        "article": article,
        "impossible": impossible,
        "abstained": True,
        "f1": float(impossible),
        "short": True,
        "leads": [lead],
    }


def test_replay_answers_from_the_first_lead_over_the_threshold_and_scores_as_squad_does() -> None:
    rows = [_row("a", False, 1.0, 0.5), _row("a", True, 0.5, 0.0)]
    separating = {
        "bias": 0.0,
        "weights": [10.0 if n == "share" else 0.0 for n in FEATURES],
        "mean": [0.75 if n == "share" else 0.0 for n in FEATURES],
        "scale": [1.0] * len(FEATURES),
    }
    weighed = weigh(rows, by_model(separating))
    # The answerable one is answered at lead F1 0.5, the impossible one abstains (scores 1).
    result = replay(weighed, 0.5)
    assert result["f1"] == 75.0 and result["hasans_abstain"] == 0.0 and result["noans_abstain"] == 100.0
    assert replay(weighed, 1.0)["hasans_abstain"] == 100.0
    assert choose_threshold(weighed)[1] == 75.0
    # The shipped check answers what it passed: the same here.
    assert replay(weigh(rows, by_check()), 1.0) == result
    assert replay(weigh(rows, by_check(0.4)), 1.0)["noans_abstain"] == 0.0


def test_folds_hold_out_whole_articles() -> None:
    parts = folds([f"article-{i:02d}" for i in range(18)])
    assert len(parts) == 6 and all(len(p) == 3 for p in parts)
    assert sorted(a for p in parts for a in p) == [f"article-{i:02d}" for i in range(18)]
