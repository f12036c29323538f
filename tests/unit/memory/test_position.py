"""The conversation-position prior: evidence near the last turn's evidence ranks higher, with the
prior explained, and only ever from what the caller sees (core/memory/position.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.kernel.contract import Request
from core.kernel.events import AnswerReady, AttemptFinished, MemoryUse, RetrievalScored
from core.kernel.session import Session
from core.kernel.summary import summarise
from core.memory.cited import content_digest
from core.memory.conversation import Conversation
from core.memory.position import (
    BUCKETS,
    WEIGHTS,
    Anchor,
    Focus,
    anchor_of,
    bucket,
    focus_min_support,
    focus_of,
    focus_threshold,
    placed,
    weights,
)
from core.memory.turns import remember, with_memory
from core.units import Caller

# Six paragraphs of a harbour log; the second and the fifth say the same about the red sail, so
# only where the conversation is can tell them apart.
LOG = (
    "The harbour of Skelby wakes before the gulls. Its quay is built of grey granite blocks.\n\n"
    "Wren mended the red sail at dawn, humming.\n\n"
    "The ferry Tamsin crosses to the island twice a day. Her engine was rebuilt in the spring.\n\n"
    "A storm tore the harbour lantern from its bracket in October. The lantern lay in the mud.\n\n"
    "Ivo mended the red sail at dusk, humming.\n\n"
    "In winter the quay is quiet, and only the ferry keeps its hours.\n"
)


@pytest.fixture(scope="module")
def harbour(tmp_path_factory) -> Session:
    folder = tmp_path_factory.mktemp("harbour")
    (folder / "log.txt").write_text(LOG, encoding="utf-8")
    return Session.open([folder / "log.txt"])


def _ask(session: Session, talk: Conversation | None, question: str) -> list[object]:
    caller = Caller()
    view = session.view(caller)
    request = Request(question=question, caller=caller)
    if talk is None:
        return list(session.run(request))
    events = list(session.run(with_memory(request, talk, view)))
    remember(talk, events, view)
    return events


def _first_scored(events: list[object]) -> RetrievalScored:
    return next(e for e in events if isinstance(e, RetrievalScored))


def _sail_unit_first(session: Session, events: list[object]) -> str:
    top = _first_scored(events).candidates[0].id
    unit = session.view(Caller()).get(top)
    assert unit is not None and unit.claim is not None
    return unit.claim


def test_the_learned_priors_favour_the_unit_discussed_and_the_next():
    learned = weights()
    assert set(learned) == set(BUCKETS)
    assert learned["same"] > learned["further"] and learned["next"] > learned["further"]
    assert min(learned.values()) == 0.0  # a prior only raises a unit
    assert "learned_by" in json.loads(WEIGHTS.read_text(encoding="utf-8"))
    assert [bucket(o) for o in (0, 1, -1, 2, -3)] == ["same", "next", "before", "further", "further"]


@pytest.mark.parametrize(
    ("first", "near"),
    [("What is the quay of Skelby built of?", "Wren"), ("What tore the harbour lantern from its bracket?", "Ivo")],
)
def test_the_same_question_ranks_the_sail_near_the_last_turns_evidence_first(harbour, first, near):
    talk = Conversation(Caller(), None, harbour.engine_config.memory, harbour.retrieval.hdc)
    _ask(harbour, talk, first)
    events = _ask(harbour, talk, "Who mended the red sail?")
    assert near in _sail_unit_first(harbour, events)
    scored = _first_scored(events)
    raised = [c for c in scored.candidates if c.position]
    assert raised and all(abs(c.score - c.fused - c.position) < 1e-9 for c in raised if c.fusion is not None)
    reason = next(e.reason for e in events if getattr(e, "plugin", "") == scored.plugin and hasattr(e, "reason"))
    assert "conversation position (learned priors, turn 1's evidence)" in reason
    summary = summarise(events)
    assert any("position" in row for row in summary["evidence"]) or not any(c.kept and c.position for c in raised)
    # --json's memory rows name the record whose evidence placed the candidates, and how.
    (anchor,) = [row for row in summary["memory"] if "position" in row]
    assert anchor["turn"] == 1 and "next (1 after turn 1's answer)" in anchor["position"]
    assert scored.position_anchor and scored.position in anchor["position"]


def test_alone_a_question_has_no_position(harbour):
    events = _ask(harbour, None, "Who mended the red sail?")
    assert all(c.position == 0 for c in _first_scored(events).candidates)
    assert all("conversation position" not in getattr(e, "reason", "") for e in events)


def _use(record: str, turn: int, unit_ids: tuple[str, ...], digests: tuple[str, ...]) -> MemoryUse:
    return MemoryUse(
        id=record,
        turn=turn,
        scope="session",
        kind="turn",
        question="q",
        unit_ids=unit_ids,
        unit_digests=digests,
        sim=0.5,
        recency=1.0,
        scope_weight=1.0,
        quality=1.0,
        score=0.5,
    )


def test_the_anchor_is_the_latest_turn_whose_units_are_unchanged_in_view(harbour):
    view = harbour.view(Caller())
    units = list(view.in_file(str(harbour.kb_paths[0])))

    ok = _use("r1", 1, (units[1].id,), (content_digest(units[1]),))
    changed = _use("r2", 2, (units[3].id,), ("0" * 32,))
    assert anchor_of([ok, changed], view) == Anchor("r1", 1, (units[1].id,))
    assert anchor_of([changed], view) is None
    places = placed(Anchor("r1", 1, (units[1].id,)), [u.id for u in units], view, weights())
    assert [places[u.id].bucket for u in units] == ["before", "same", "next", "further", "further", "further"]
    assert [places[u.id].offset for u in units] == [-1, 0, 1, 2, 3, 4]


def test_a_unit_of_another_file_is_not_placed(harbour, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("Wren mended the red sail at noon.\n", encoding="utf-8")
    both = Session.open([Path(harbour.kb_paths[0]), other])
    view = both.view(Caller())
    first = next(u for u in view.units if "Skelby" in (u.claim or ""))
    elsewhere = next(u for u in view.units if "noon" in (u.claim or ""))
    assert elsewhere.id not in placed(Anchor("r", 1, (first.id,)), [elsewhere.id, first.id], view, weights())


def test_a_follow_up_sharing_no_word_with_the_passage_finds_the_passage_discussed(harbour):
    alone = _ask(harbour, None, "On what date?")
    assert not any(c.kept for e in alone if isinstance(e, RetrievalScored) for c in e.candidates)
    talk = Conversation(Caller(), None, harbour.engine_config.memory, harbour.retrieval.hdc)
    _ask(harbour, talk, "What tore the harbour lantern from its bracket?")
    events = _ask(harbour, talk, "On what date?")
    kept = [c for c in _first_scored(events).candidates if c.kept]
    claims = [harbour.view(Caller()).get(c.id).claim or "" for c in kept]  # type: ignore[union-attr]
    assert any("storm tore the harbour lantern" in claim for claim in claims)
    assert all(c.position > 0 and c.fused == 0 for c in kept)  # pooled by position alone, and said so


def test_a_question_that_stands_alone_keeps_no_unit_by_position_alone(harbour):
    """In the explorer every question after the first is in a conversation: one with a verb of its
    own and nothing left to the conversation is not pulled towards the last answer's passage."""
    talk = Conversation(Caller(), None, harbour.engine_config.memory, harbour.retrieval.hdc)
    _ask(harbour, talk, "What tore the harbour lantern from its bracket?")
    events = _ask(harbour, talk, "How often does the ferry Tamsin cross to the island?")
    candidates = _first_scored(events).candidates
    assert candidates and all(c.fused > 0 for c in candidates)  # every one found by a lane
    claims = [harbour.view(Caller()).get(c.id).claim or "" for c in candidates if c.kept]  # type: ignore[union-attr]
    assert claims and not any("lantern" in claim for claim in claims)


@pytest.mark.parametrize(
    ("question", "follow_up"),
    [
        ("Who maintains it?", True),
        ("And Helix?", True),
        ("Why?", True),
        ("Do juniors pay the same fee?", True),
        ("On what date?", True),  # no verb: a fragment of the conversation
        ("What is the depot gate code?", False),
        ("Who mended the red sail?", False),
    ],
)
def test_a_follow_up_is_read_from_the_questions_grammar(question, follow_up):
    from core.memory.followup import refers_back

    assert refers_back(question) is follow_up


def _answered(events: list[object]) -> tuple[str, str, str]:
    """(status, answer, the goal solver's reason) of a run."""
    ready = next(e for e in reversed(events) if isinstance(e, AnswerReady))
    solved = [e for e in events if isinstance(e, AttemptFinished) and e.plugin == "gs-symbolic"]
    return ready.status, ready.answer, solved[-1].reason if solved else ""


def test_a_fragment_follow_up_is_answered_from_the_passage_the_conversation_is_at(harbour):
    """ "On what date?" says only what kind of answer it wants: alone it has no evidence; after
    the lantern question the unit that answer cited is where its date is, and the conversation
    focus lets the answer rest on it though it never says "date"."""
    assert _answered(_ask(harbour, None, "On what date?"))[0] != "grounded"
    talk = Conversation(Caller(), None, harbour.engine_config.memory, harbour.retrieval.hdc)
    _ask(harbour, talk, "What tore the harbour lantern from its bracket?")
    status, answer, reason = _answered(_ask(harbour, talk, "On what date?"))
    assert status == "grounded" and answer.startswith("October")
    assert "conversation focus:" in reason and f">= {focus_threshold():.3f}" in reason


def test_the_focus_is_a_typed_decision_against_the_learned_threshold():
    learned = json.loads(WEIGHTS.read_text(encoding="utf-8"))["focus"]
    assert learned["min_prior"] == focus_threshold() and len(learned["cross_validated"]) == 5
    kept = [("u-before", weights()["before"]), ("u-same", weights()["same"]), ("u-far", 0.0)]
    chosen = focus_of(True, kept, focus_threshold())
    assert chosen is not None and chosen.unit == "u-same" and chosen.accepted
    assert not Focus("u-before", weights()["before"], focus_threshold()).accepted
    assert "not used" in Focus("u-before", weights()["before"], focus_threshold()).note()
    assert not Focus("u-same", weights()["same"], 0.0).accepted  # 0: the focus is never taken
    assert focus_of(False, kept, focus_threshold()) is None  # a question that stands alone
    assert focus_of(True, [("u-far", 0.0)], focus_threshold()) is None  # nothing placed near


def test_a_question_that_stands_alone_in_a_conversation_takes_no_focus(harbour):
    talk = Conversation(Caller(), None, harbour.engine_config.memory, harbour.retrieval.hdc)
    _ask(harbour, talk, "What tore the harbour lantern from its bracket?")
    _, _, reason = _answered(_ask(harbour, talk, "When was the engine of the ferry Tamsin rebuilt?"))
    assert "conversation focus" not in reason


def test_a_follow_up_reworded_from_its_passage_is_answered_there_and_not_alone(harbour):
    """ "Where did it land?" rewords "The lantern lay in the mud": the focus unit says no word of
    the question but "it". In the conversation a lead there needs only the learned least support,
    and the reason says so; asked alone, the general check still refuses it."""
    alone = _answered(_ask(harbour, None, "Where did the harbour lantern land?"))
    assert alone[0] != "grounded"
    talk = Conversation(Caller(), None, harbour.engine_config.memory, harbour.retrieval.hdc)
    _ask(harbour, talk, "What tore the harbour lantern from its bracket?")
    status, answer, reason = _answered(_ask(harbour, talk, "Where did it land?"))
    assert status == "grounded" and answer.startswith("mud")
    assert f"a lead there needs support >= {focus_min_support():.2f}" in reason


def test_the_focus_support_is_learned_by_folds_and_applies_to_the_focus_unit_only():
    from core.answer.short_answer import FocusRules, rules_for
    from core.answer.support import LEAD, SUPPORT_THRESHOLD
    from core.plugins.solve import focus_rules

    learned = json.loads(WEIGHTS.read_text(encoding="utf-8"))["focus"]["min_support"]
    assert learned["value"] == focus_min_support() and len(learned["cross_validated"]) == 5
    assert SUPPORT_THRESHOLD in learned["candidates"]  # the general check was a candidate
    accepted = Focus("u-same", weights()["same"], focus_threshold(), focus_min_support())
    rules = focus_rules(accepted)
    assert rules is not None and rules.unit == "u-same" and rules.rules.threshold == focus_min_support()
    assert rules_for(rules, "u-other") is LEAD and rules_for(None, "u-same") is LEAD
    assert rules_for(FocusRules("u-same", rules.rules), "u-same").threshold == focus_min_support()
    assert focus_rules(Focus("u-before", weights()["before"], focus_threshold(), 0.0)) is None  # not accepted
    assert focus_rules(Focus("u-same", weights()["same"], focus_threshold())) is None  # none learned
