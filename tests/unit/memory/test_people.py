"""Who a story's names are, learned from the story's own text: the gender it goes on to use for
a name, the names that say or think something, and never from a list of first names; read only
from the text the caller may see."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.kernel.contract import Request
from core.kernel.session import Session
from core.memory.conversation import Conversation
from core.memory.mentions import TurnText, mentions_of
from core.memory.people import people_of
from core.memory.referents import FEATURES, GROUPS, Model, choose
from core.memory.turns import remember, with_memory
from core.plugins.seed import _candidate
from core.units import Caller

STORY = (
    "Orla Dunne ran the ferry office for years. She kept the timetables herself.\n\n"
    "Bram Keld, the harbour pilot, said the tide was late. His boat waited at the quay.\n\n"
    "In Harwick, the office closed at noon. LONDON (CNN) -- Nobody else came."
)
EAGER = Model({k: 0.0 for k in FEATURES} | {"bias": 1.0, "gender": 2.0}, {g: 0.0 for g in GROUPS})


def test_the_text_says_who_is_she_and_who_is_he():
    people = people_of(STORY)
    assert people.gender("Orla Dunne") == "she" and people.gender("Dunne") == "she" and people.gender("Orla") == "she"
    assert people.gender("Bram Keld") == "he"
    # A place after a preposition and a dateline in capitals are no one's name.
    assert people.evidence("Harwick") == 0 and people.evidence("LONDON") == 0


def test_a_name_that_says_or_is_set_beside_a_person_noun_is_someone():
    people = people_of("Tamsin Roe said the bridge was shut. Ewan Pike, a retired pilot, agreed.")
    assert people.evidence("Tamsin Roe") >= 1
    assert people.evidence("Ewan Pike") >= 1
    assert people_of("The bridge at Carrow was shut.").evidence("Carrow") == 0


def test_an_unnamed_gender_gives_no_gender():
    # No pronoun follows either name: a first name alone never decides ("Robin", "Sam").
    people = people_of("Robin Hale opened the gate. Sam Tull closed it.")
    assert people.gender("Robin Hale") == "" and people.gender("Sam Tull") == ""


def test_the_story_text_genders_a_name_the_cited_sentence_does_not():
    # The cited unit never says "she"; the rest of the file the caller sees does.
    cited = ("Orla Dunne and Bram Keld met at the quay.",)
    said = mentions_of([TurnText(0, "Who met at the quay?", "Orla Dunne and Bram Keld", cited, document=STORY)])
    she = choose("What did she keep?", said, EAGER)[0]
    assert she.chosen is not None and "Orla" in she.chosen.text
    assert all("Bram" not in c.text for c in she.candidates)
    he = choose("What did he say?", said, EAGER)[0]
    assert he.chosen is not None and "Bram" in he.chosen.text
    assert "evidence " in he.note()  # the story text's evidence is part of the explanation


@pytest.fixture(scope="module")
def yard(tmp_path_factory) -> Session:
    folder = tmp_path_factory.mktemp("yard")
    (folder / "yard.md").write_text(
        "# Yard\n\n"
        "## Context Unit yard::chunk-000::unit-000\nSourceId: yard\nChunkId: yard::chunk-000\nRole: Description\n"
        "Title: Boatyard\nTopic: Boatyard\nClaim: Kit Moss runs the Harwick boatyard.\n\n"
        "## Context Unit yard::chunk-000::unit-001\nSourceId: yard\nChunkId: yard::chunk-000\nRole: Description\n"
        "Title: Lease\nTopic: Lease\nClaim: Kit Moss signed the lease in 1999. She sold the yard later.\nAcl: crew\n",
        encoding="utf-8",
    )
    return Session.open([Path(folder / "yard.md")])


@pytest.mark.parametrize(("caller", "gender"), [(Caller(), ""), (Caller(tags=frozenset({"crew"})), "she")])
def test_the_story_text_read_for_a_referent_is_only_the_callers_view(yard, caller, gender):
    talk = Conversation(caller, None, yard.engine_config.memory, yard.retrieval.hdc)
    view = yard.view(caller)
    remember(
        talk,
        list(yard.run(with_memory(Request(question="Who runs the Harwick boatyard?", caller=caller), talk, view))),
        view,
    )
    request = with_memory(Request(question="What did she sell?", caller=caller), talk, view)
    documents = [_candidate(use, view).document for use in request.memory]
    assert documents and all(("She sold" in d) == (gender == "she") for d in documents)
    assert {people_of(d).gender("Kit Moss") for d in documents} == {gender}
