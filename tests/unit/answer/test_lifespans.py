"""Lifespans after a name (core/answer/lifespans.py) answer when someone was born or died."""

from __future__ import annotations

from test_support import gap, support_of

from core.answer.lifespans import lifespans
from core.nlp.tagging import tag_text

SENTENCE = "The keepers Olu Brenner (1861–1932) and Ada Marten (1870–1941) repainted the lantern."


def test_a_parenthesised_year_range_after_a_name_is_its_lifespan() -> None:
    tokens = tag_text(SENTENCE)
    spans = lifespans(tokens)
    assert [(tokens[s.born].word, tokens[s.died].word) for s in spans] == [("1861", "1932"), ("1870", "1941")]
    assert "brenner" in spans[0].name and "marten" in spans[1].name
    # One year, or a death alone, is no lifespan.
    assert lifespans(tag_text("The flood of St. Ada (1421) and Olu Brenner (d. 1560) changed the coast.")) == []


def test_asked_when_someone_was_born_or_died_the_lifespan_says_it_and_holds_the_lead() -> None:
    born = support_of("When was Ada Marten born?", SENTENCE, "1870")
    assert born.passed and any("lifespan" in link for link in born.links), born.reasons
    assert support_of("When did Olu Brenner die?", SENTENCE, "1932").passed
    assert gap("When was Ada Marten born?", SENTENCE, "1870") and not gap("When was Ada Marten born?", SENTENCE, "1941")
    assert gap("When did Olu Brenner die?", SENTENCE, "1932") and not gap("When did Olu Brenner die?", SENTENCE, "1861")
    # Another person's lifespan says nothing of this one.
    assert not support_of("When was Karl Osei born?", SENTENCE, "1870").passed
