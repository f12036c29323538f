"""Which words of a conversation are mentions a pronoun may stand for (core/memory/mentions.py):
a capitalised word is a name by grammar and the lexicon, not by its capital alone."""

from __future__ import annotations

from core.memory.mentions import TurnText, capitalised_inside, mentions_of
from core.memory.referents import FEATURES, GROUPS, Model, choose

EAGER = Model({k: 0.0 for k in FEATURES} | {"bias": 1.0, "recency": 1.0}, {g: 0.0 for g in GROUPS})


def _texts(story: str, question: str = "Who spoke?", lead: str = "") -> list[str]:
    return [m.text for m in mentions_of([TurnText(0, question, lead, (story,), document=story)])]


def test_a_common_word_opening_a_sentence_is_no_name():
    said = _texts("Says the ferryman, the tide turns at noon. Suddenly Halvard Moss rowed out.")
    assert "Says" not in said and "Suddenly" not in said
    assert "Halvard Moss" in said


def test_a_question_word_is_never_a_mention():
    said = mentions_of([TurnText(0, "Why?", "Why indeed"), TurnText(1, "What did Oriel Vance sell?", "Honey")])
    assert all(m.text.lower() not in ("why", "what") for m in said)


def test_a_common_noun_opening_a_sentence_keeps_its_lexicon_type():
    said = mentions_of([TurnText(0, "What rose?", "", ("River levels rose after the storm.",))])
    river = [m for m in said if m.head in ("river", "levels")]
    assert river and not any(m.named or m.person for m in river)


def test_a_name_the_text_also_writes_mid_sentence_stays_a_name():
    story = "Rose mended the nets. The harbour master thanked Rose. She sailed at dawn."
    she = choose("Where did she sail?", mentions_of([TurnText(0, "Who mended the nets?", "Rose", (story,))]), EAGER)
    assert she[0].chosen is not None and she[0].chosen.text == "Rose"


def test_capitals_after_a_sentence_opening_are_not_counted_as_names():
    inside = capitalised_inside("Rose mended the nets. The master thanked Rose, and Tamsin. Later they left.")
    assert {"rose", "tamsin"} <= inside and "later" not in inside and "the" not in inside


def test_two_pronouns_of_one_question_never_take_the_same_referent():
    # Nothing says whether Ondine is someone or a boat: the name agrees with "he" and with "it".
    story = "Ondine reached the quay at noon."
    said = mentions_of([TurnText(0, "What reached the quay?", "Ondine", (story,), document=story)])
    anything = Model({k: 0.0 for k in FEATURES} | {"bias": 1.0}, {g: 0.0 for g in GROUPS})
    chosen = [c.chosen.text for c in choose("Where did he put it?", said, anything) if c.chosen is not None]
    assert len(chosen) == len(set(chosen))
