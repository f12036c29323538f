"""Where the conversation stands in the story: the previous answer's sentence, and how far from it
each referent is said (core/memory/passage.py), as the referent model's `ahead`/`behind` features."""

from __future__ import annotations

from core.memory.mentions import TurnText, mentions_of
from core.memory.passage import NEAR_SENTENCES, Passage
from core.memory.referents import FEATURES, GROUPS, Model, choose

STORY = (
    "Anna Berg keeps bees above Oswick. She sells honey at the market. "
    "Ruth Berg taught school in Oswick for thirty years. She retired in 2003. "
    "Her husband Tomas fished. Ruth's sister Ida stayed."
)


def test_the_previous_answer_is_placed_in_the_sentence_sharing_most_of_its_words():
    assert Passage.of(STORY, "Ruth Berg taught school in Oswick").at == 2
    assert Passage.of(STORY, "").at is None and Passage.of("", "Ruth Berg").at is None
    assert Passage.of(STORY, "zebra crossings").at is None  # no word in common: nowhere


def test_nearness_counts_sentences_ahead_of_and_behind_the_answer():
    passage = Passage.of(STORY, "Ruth Berg taught school in Oswick")
    assert passage.nearness("ruth") == (1.0, 0.0)  # said in the answer's own sentence
    assert passage.nearness("tomas") == (1 / 3, 0.0)  # two sentences on
    assert passage.nearness("honey") == (0.0, 0.5)  # the sentence before
    assert passage.nearness("anna") == (0.0, 1 / 3)  # two sentences back
    assert passage.nearness("Ruth's sister") == (0.25, 0.0)  # three sentences on: a possessive says the name
    assert passage.nearness("Anna Berg") == (0.0, 1 / 3)  # "Ruth Berg" does not say her
    assert passage.nearness("nobody") == (0.0, 0.0)


def test_a_referent_said_beyond_the_window_is_not_near():
    far = " ".join(f"Sentence {i} is here." for i in range(NEAR_SENTENCES + 2)) + " Tomas came."
    passage = Passage.of("Anna spoke. " + far, "Anna spoke")
    assert passage.nearness("tomas") == (0.0, 0.0)


def test_the_referent_just_discussed_in_the_story_wins_when_nearness_is_what_counts():
    # Both women are "she"; only where the conversation stands in the story tells them apart.
    turns = [TurnText(0, "Who taught school?", "Ruth Berg taught school in Oswick", document=STORY)]
    said = mentions_of(turns + [TurnText(1, "Who keeps bees?", "Anna Berg")])
    near = Model({k: 0.0 for k in FEATURES} | {"ahead": 3.0}, {g: 0.0 for g in GROUPS})
    choice = choose("When did she retire?", said, near, document=STORY, answer="Ruth Berg taught school in Oswick")[0]
    assert choice.chosen is not None and choice.chosen.text == "Ruth Berg"
    assert "ahead 1.00×+3.00" in choice.note()
    anna = next(c for c in choice.candidates if c.text == "Anna Berg")
    assert anna.features["ahead"] == 0.0 and anna.features["behind"] == 1 / 3
