"""core.nlp.chunk: noun-phrase spans from UPOS tags (nltk's RegexpParser)."""

from __future__ import annotations

from core.nlp.chunk import noun_phrases
from core.nlp.tagger import tag_text


def _phrases(tagged: list[tuple[str, str]]) -> list[str]:
    return [" ".join(word for word, _ in tagged[start:end]) for start, end in noun_phrases(tagged)]


def test_spans_cover_determiners_adjectives_numbers_and_compound_nouns():
    tagged = [
        ("The", "DET"), ("two", "NUM"), ("old", "ADJ"), ("ferry", "NOUN"), ("terminals", "NOUN"),
        ("closed", "VERB"), ("in", "ADP"), ("1911", "NUM"), (".", "PUNCT"),
    ]
    assert noun_phrases(tagged) == [(0, 5), (7, 8)]


def test_proper_names_possessives_and_dates_are_one_chunk_each_and_pronouns_none():
    tagged = [
        ("She", "PRON"), ("visited", "VERB"), ("Ada", "PROPN"), ("Lovelace", "PROPN"), ("'s", "PART"),
        ("workshop", "NOUN"), ("on", "ADP"), ("12", "NUM"), ("May", "PROPN"), ("1843", "NUM"),
    ]
    assert _phrases(tagged) == ["Ada Lovelace 's workshop", "12 May 1843"]


def test_a_participle_after_a_determiner_belongs_to_the_phrase():
    tagged = [("a", "DET"), ("refurbished", "VERB"), ("notebook", "NOUN"), ("arrived", "VERB")]
    assert noun_phrases(tagged) == [(0, 3)]
    assert noun_phrases([("refurbished", "VERB"), ("notebooks", "NOUN")]) == [(1, 2)]


def test_with_the_shipped_tagger_on_a_sentence_in_a_new_domain():
    tagged = tag_text("The beekeeper moved forty hives to Lower Dunmore after the late frost.")
    assert _phrases(tagged) == ["The beekeeper", "forty hives", "Lower Dunmore", "the late frost"]


def test_no_words_no_chunks_and_no_nouns_no_chunks():
    assert noun_phrases([]) == []
    assert noun_phrases([("run", "VERB"), ("!", "PUNCT")]) == []
